// SPDX-License-Identifier: GPL-3.0-or-later
// Go with assembly: crypto/sha256's block function (hand-written, uses BP as a general
// register) under Go code with frame pointers, on the main goroutine and on a second one;
// and as long again in Go code of its own (mix: a function with a frame calling a small one,
// and a frameless leaf), whose frame records a frame-pointer walk can follow.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"strconv"
	"time"
)

// Not a constant: the buffers go to the heap, as most Go data does, not into a 64 KiB frame.
var bufSize = 64 << 10

//go:noinline
func hashLoop(buf []byte, n int) [32]byte {
	var s [32]byte
	for i := 0; i < n; i++ {
		s = sha256.Sum256(buf)
		buf[0] = s[0]
	}
	return s
}

// A frameless leaf.
//
//go:noinline
func step(h uint64, w uint64) uint64 {
	return (h ^ w) * 1099511628211
}

// A function with a frame that calls: its prologue and epilogue are sampled too.
//
//go:noinline
func fold(h uint64, b []byte) uint64 {
	h = step(h, binary.LittleEndian.Uint64(b))
	return step(h, binary.LittleEndian.Uint64(b[8:]))
}

//go:noinline
func mix(buf []byte, n int) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < n; i++ {
		for j := 0; j+16 <= len(buf); j += 16 {
			h = fold(h, buf[j:j+16])
		}
	}
	return h
}

//go:noinline
func work(secs int) byte {
	buf := make([]byte, bufSize)
	end := time.Now().Add(time.Duration(secs) * time.Second)
	var x byte
	for time.Now().Before(end) {
		s := hashLoop(buf, 16)
		x ^= s[1] ^ byte(mix(buf, 100))
	}
	return x
}

//go:noinline
func worker(secs int, done chan<- byte) {
	done <- work(secs)
}

func main() {
	secs := 2
	if len(os.Args) > 1 {
		secs, _ = strconv.Atoi(os.Args[1])
	}
	done := make(chan byte)
	go worker(secs, done)
	if work(secs)^<-done == 42 {
		os.Exit(3)
	}
}
