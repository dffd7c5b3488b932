# A Ruby program with a known call chain, for the tests of Ruby frames (issue 29): <main> ->
# first -> a block of Array#map (C) -> second -> third -> a block of Integer#times (C). Each
# line the tests look for carries a "LINE:" tag. Usage: ruby rbchain.rb SECONDS [thread|nap]
# ("thread": the chain runs in a second thread; "nap": and a third one naps, without the GVL
# while it sleeps).
def third(n)
  s = 0
  n.times { |i| s += i * i } # LINE:third
  s
end

def second(n)
  third(n) + 1 # LINE:second
end

def first(n)
  [1, 2].map { |x| second(n) + x }.sum # LINE:first
end

def run(seconds)
  t = Time.now + seconds
  first(20000) while Time.now < t # LINE:run
end

def nap(seconds)
  t = Time.now + seconds
  sleep 0.01 while Time.now < t # LINE:nap
end

seconds = (ARGV[0] || "2").to_f
if ARGV[1] == "nap"
  [Thread.new { run(seconds) }, Thread.new { nap(seconds) }].each(&:join)
elsif ARGV[1] == "thread"
  Thread.new { run(seconds) }.join # LINE:thread
else
  run(seconds) # LINE:main
end
