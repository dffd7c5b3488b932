# SPDX-License-Identifier: GPL-3.0-or-later
# Writes tests/unit/rbline_vectors.h: line tables and strings of Debian's ruby3.1 (3.1.2) as
# its own memory holds them, read in-process with Fiddle, for tests/unit/test_ruby.c.
#
#   ruby3.1 tests/unit/rbline_gen.rb > tests/unit/rbline_vectors.h
#
# Per iseq: iseq_size, insns_info.size, first_lineno, the bytes of insns_info.body (12 a
# entry) and of the succinct index table (8 a word of its immediate part while
# iseq_size < 54, else 48 + 80 a block), and the line of each instruction as
# RubyVM::InstructionSequence#disasm prints it (rb_iseq_line_no at the instruction's start).
# Offsets are Debian's (lib/ruby/rblayout.c); the RTypedData data pointer is at 32.
require 'fiddle'

abort "ruby 3.1 only (this is #{RUBY_VERSION})" unless RUBY_VERSION.start_with?("3.1.")

def rd(a, n) = Fiddle::Pointer.new(a)[0, n]
def q(a) = rd(a, 8).unpack1('Q<')
def hex(s) = s.bytes.map { |b| format('0x%02x', b) }.each_slice(12).map { |l| "\t" + l.join(', ') + ',' }.join("\n")

def small(x)
  y = x + 1
  y * 2
end

def with_block(list)
  list.map do |e|
    e.to_s
  end
end

def one_line = 42

# A method of well over 54 + 512 words: its table has an immediate part and two blocks.
src = +"def big(a)\n"
300.times { |i| src << "  a = a + #{i}\n" << (i % 7 == 0 ? "\n" : "") }
src << "  a\nend\n"
eval(src, binding, "big.rb", 1)

def iseq_of(m)
  w = RubyVM::InstructionSequence.of(m)
  [w, q(Fiddle.dlwrap(w) + 32)]
end

def lines(w)
  out = []
  cur = 0
  w.disasm.each_line do |l|
    break if l.start_with?("== disasm") && !out.empty?
    next unless l =~ /\A(\d{4}) /
    pos = $1.to_i
    cur = $1.to_i if l =~ /\(\s*(\d+)\)(\[[A-Za-z]+\])?\s*\z/
    out << [pos, cur]
  end
  out
end

iseqs = {
  "small" => method(:small),
  "block" => (c = []; RubyVM::InstructionSequence.of(method(:with_block)).each_child { |i| c << i }; c.first),
  "one_line" => method(:one_line),
  "big" => method(:big),
}

puts "/* SPDX-License-Identifier: GPL-3.0-or-later */"
puts "/* Made by tests/unit/rbline_gen.rb from #{RUBY_DESCRIPTION}: do not edit. */"
puts "#ifndef RBLINE_VECTORS_H\n#define RBLINE_VECTORS_H\n#include <stdint.h>\n"
puts "struct rbline_vec {\n\tconst char *name;\n\tuint32_t iseq_size, info_size;\n\tint first_lineno;"
puts "\tconst uint8_t *info;\n\tsize_t info_len;\n\tconst uint8_t *succ;\n\tsize_t succ_len;"
puts "\tconst uint32_t (*insns)[2];\t/* instruction start, its line */\n\tsize_t nr_insns;\n};\n"
iseqs.each do |name, m|
  w, iseq = m.is_a?(RubyVM::InstructionSequence) ? [m, q(Fiddle.dlwrap(m) + 32)] : iseq_of(m)
  body = q(iseq + 16)
  _type, size = rd(body, 8).unpack('LL')
  info_body, _positions, info_size, succ = rd(body + 120, 32).unpack('QQLxxxxQ')
  first = q(body + 88) >> 1
  imm = (size < 54 ? size + 8 : 54) / 9
  blocks = (size < 54 ? 0 : size - 54 + 511) / 512
  succ_len = blocks > 0 ? 48 + 80 * blocks : imm * 8
  ins = lines(w)
  puts "static const uint8_t rbv_#{name}_info[] = {\n#{hex(rd(info_body, info_size * 12))}\n};"
  puts "static const uint8_t rbv_#{name}_succ[] = {\n#{hex(info_size > 1 ? rd(succ, succ_len) : '')}\n};"
  puts "static const uint32_t rbv_#{name}_insns[][2] = {"
  ins.each_slice(6) { |s| puts "\t" + s.map { |p, l| "{ #{p}, #{l} }," }.join(' ') }
  puts "};"
  $stderr.puts "#{name}: iseq_size #{size} info #{info_size} first #{first} succ #{succ_len} insns #{ins.size}"
  (($vecs ||= []) << "\t{ \"#{name}\", #{size}, #{info_size}, #{first}, rbv_#{name}_info, sizeof(rbv_#{name}_info), " \
                    "rbv_#{name}_succ, #{info_size > 1 ? "sizeof(rbv_#{name}_succ)" : 0}, rbv_#{name}_insns, " \
                    "sizeof(rbv_#{name}_insns) / sizeof(rbv_#{name}_insns[0]) },")
end
puts "static const struct rbline_vec rbline_vecs[] = {\n#{$vecs.join("\n")}\n};\n"

# Strings: the 40 bytes of each RString (flags, klass, then embedded bytes or len and ptr),
# and for heap ones the bytes at ptr.
strs = { "embedded" => "small", "empty" => "", "embed_max" => "a" * 23, "heap" => "/usr/lib/ruby/3.1.0/rubygems/core_ext/kernel_require.rb",
         "utf8" => "gr\u00f6\u00dfe_\u2603", "binary" => "ab\xffcd".b }
puts "struct rbstr_vec {\n\tconst char *name;\n\tuint8_t obj[40];\n\tconst char *heap;\t/* the bytes at as.heap.ptr */\n\tsize_t heap_len;\n\tconst char *text;\n};"
puts "static const struct rbstr_vec rbstr_vecs[] = {"
strs.each do |name, s|
  s = s.frozen? ? s : s.dup.freeze
  obj = rd(Fiddle.dlwrap(s), 40)
  flags = obj.unpack1('Q<')
  heap = (flags & 0x2000) != 0
  cs = ->(b) { '"' + b.bytes.map { |c| format('\\x%02x', c) }.join + '"' }
  text = s.dup.force_encoding('UTF-8').scrub("\uFFFD")
  puts "\t{ \"#{name}\", {\n#{hex(obj)}\n\t}, #{heap ? cs.(s.b) : 'NULL'}, #{heap ? s.bytesize : 0}, #{cs.(text.b)} },"
end
puts "};\n\n#endif"
