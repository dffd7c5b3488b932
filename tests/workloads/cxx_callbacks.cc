// SPDX-License-Identifier: GPL-3.0-or-later
// C++ with frame pointers (clang++) calling into Debian's libstdc++ (built without them)
// through the PLT, and back:
//
//   cxx_callbacks SECONDS stream  main -> cb_stream_outer -> std::ostream::operator<< and
//                                 num_put (libstdc++) -> CountingBuf::xsputn (virtual, here)
//                                 -> cb_sink_work
//   cxx_callbacks SECONDS sort    main -> cb_sort_outer -> std::sort's loops (here) with a
//                                 comparator lambda -> std::function -> cb_less
//   cxx_callbacks SECONDS throw   main -> cb_throw_outer -> cb_thrower -> __cxa_throw
//                                 (libstdc++) -> _Unwind_RaiseException (libgcc_s) -> ...
//
// A frame-pointer walk from xsputn finds in its record whatever rbp libstdc++ left: the
// libstdc++ frames, or more, would be skipped.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <vector>

static volatile unsigned long cb_sink;

static double cb_now()
{
	return std::chrono::duration<double>(
		std::chrono::steady_clock::now().time_since_epoch()).count();
}

__attribute__((noinline)) void cb_sink_work(const char *s, long n)
{
	unsigned long x = cb_sink;

	for (int k = 0; k < 400; k++)
		for (long i = 0; i < n; i++)
			x = x * 6364136223846793005UL + (unsigned char)s[i];
	cb_sink = x;
}

// Every character the stream writes comes here, called from libstdc++'s code.
class CountingBuf : public std::streambuf {
protected:
	__attribute__((noinline)) std::streamsize xsputn(const char *s, std::streamsize n) override
	{
		cb_sink_work(s, n);
		return n;
	}
	__attribute__((noinline)) int_type overflow(int_type c) override
	{
		char ch = (char)c;

		cb_sink_work(&ch, 1);
		return c;
	}
};

__attribute__((noinline)) void cb_stream_outer(double seconds)
{
	CountingBuf buf;
	std::ostream os(&buf);
	double end = cb_now() + seconds;
	unsigned long i = 0;

	while (cb_now() < end)
		for (int k = 0; k < 1000; k++)
			os << i++;
}

__attribute__((noinline)) bool cb_less(unsigned a, unsigned b)
{
	unsigned long x = a;

	for (int i = 0; i < 50; i++)
		x = x * 6364136223846793005UL + i;
	cb_sink += x;
	return a < b;
}

__attribute__((noinline)) void cb_sort_outer(double seconds)
{
	std::function<bool(unsigned, unsigned)> less = cb_less;
	std::vector<unsigned> v(4096);
	double end = cb_now() + seconds;
	unsigned seed = 1;

	while (cb_now() < end) {
		for (auto &x : v)
			x = seed = seed * 1103515245u + 12345u;
		std::sort(v.begin(), v.end(), [&](unsigned a, unsigned b) { return less(a, b); });
	}
}

__attribute__((noinline)) void cb_thrower(unsigned long i)
{
	throw std::runtime_error(i & 1 ? "odd" : "even");
}

__attribute__((noinline)) void cb_throw_outer(double seconds)
{
	double end = cb_now() + seconds;
	unsigned long i = 0;

	while (cb_now() < end)
		for (int k = 0; k < 100; k++) {
			try {
				cb_thrower(i++);
			} catch (const std::exception &e) {
				cb_sink += e.what()[0];
			}
		}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
	const char *mode = argc > 2 ? argv[2] : "stream";

	if (!std::strcmp(mode, "sort"))
		cb_sort_outer(seconds);
	else if (!std::strcmp(mode, "throw"))
		cb_throw_outer(seconds);
	else
		cb_stream_outer(seconds);
	return 0;
}
