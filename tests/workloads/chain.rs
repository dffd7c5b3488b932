// SPDX-License-Identifier: GPL-3.0-or-later
// A no-frame-pointer Rust chain (rustc -O, lld-linked by current toolchains):
// main -> level_a -> level_b -> level_c -> (an iterator closure, inlined) -> hot.
// Also built by Debian 12's rustc 1.63, older than std::hint::black_box (1.66): a volatile
// read hides values from the optimizer instead.
#[inline(always)] fn black_box(x: u64) -> u64 { unsafe { std::ptr::read_volatile(&x) } }
#[inline(never)] fn hot(n: u64) -> u64 { let mut x = n; for i in 0..2000u64 { x = x.wrapping_mul(6364136223846793005).wrapping_add(i); } x }
#[inline(never)] fn level_c(n: u64) -> u64 { let v: Vec<u64> = (0..64).map(|i| hot(n + i)).collect(); v.iter().sum() }
#[inline(never)] fn level_b(n: u64) -> u64 { level_c(black_box(n)) ^ 3 }
#[inline(never)] fn level_a(n: u64) -> u64 { level_b(black_box(n)) ^ 5 }
fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2);
    let t = std::time::Instant::now(); let mut acc = 0u64;
    while t.elapsed().as_secs() < secs { acc ^= level_a(black_box(acc)); }
    black_box(acc);
}
