// SPDX-License-Identifier: GPL-3.0-or-later
// Go with assembly: crypto/sha256's block function (hand-written, uses BP as a general
// register) under Go code with frame pointers.
package main

import (
	"crypto/sha256"
	"os"
	"strconv"
	"time"
)

//go:noinline
func hashLoop(buf []byte, n int) [32]byte {
	var s [32]byte
	for i := 0; i < n; i++ {
		s = sha256.Sum256(buf)
		buf[0] = s[0]
	}
	return s
}

//go:noinline
func work(secs int) byte {
	buf := make([]byte, 64<<10)
	end := time.Now().Add(time.Duration(secs) * time.Second)
	var x byte
	for time.Now().Before(end) {
		s := hashLoop(buf, 16)
		x ^= s[1]
	}
	return x
}

func main() {
	secs := 2
	if len(os.Args) > 1 {
		secs, _ = strconv.Atoi(os.Args[1])
	}
	if work(secs) == 42 {
		os.Exit(3)
	}
}
