// SPDX-License-Identifier: GPL-3.0-or-later
// A goroutine recursing (fibGo(25) in a loop: two calls of itself, so a sample in its
// prologue or epilogue window cannot tell its caller by the calls) while the main goroutine
// hashes with crypto/sha256's assembly over a 64 KiB buffer in its own frame (its caller
// lies past a 16 KiB stack copy). Issue 26: half of fibGo's samples were cut at the leaf,
// where perf -g and a DWARF unwind have them whole.
package main

import (
	"crypto/sha256"
	"os"
	"strconv"
	"time"
)

var sink int

//go:noinline
func fibGo(n int) int {
	if n < 2 {
		return n
	}
	return fibGo(n-1) + fibGo(n-2)
}

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	done := make(chan bool)
	go func() {
		for time.Now().Before(end) {
			sink += fibGo(25)
		}
		done <- true
	}()
	buf := make([]byte, 1<<16)
	var sum [32]byte
	for time.Now().Before(end) {
		sum = sha256.Sum256(buf)
		buf[0] = sum[0]
	}
	<-done
}
