// SPDX-License-Identifier: GPL-3.0-or-later
// A C++ template method, for demangling: ns::Box<int>::work(double).
#include <chrono>
#include <cstdlib>

namespace ns {
template <class T> struct Box {
	T value;
	__attribute__((noinline)) double work(double seconds);
};

template <class T> double Box<T>::work(double seconds)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	volatile double acc = value;

	while (std::chrono::steady_clock::now() < end)
		for (int i = 0; i < 100000; i++)
			acc = acc * 1.0000001 + i;
	return acc;
}
} // namespace ns

int main(int argc, char **argv)
{
	ns::Box<int> box{3};

	return box.work(argc > 1 ? std::atof(argv[1]) : 2.0) < 0;
}
