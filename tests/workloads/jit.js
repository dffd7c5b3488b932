// SPDX-License-Identifier: GPL-3.0-or-later
// A hot JavaScript function for the JIT-map test: run with node --perf-basic-prof.
'use strict';
function hotJsFunction(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;
  return x;
}
const seconds = Number(process.argv[2] || 2);
const end = Date.now() + seconds * 1000;
let sink = 0;
while (Date.now() < end) sink += hotJsFunction(100000);
if (sink === -1) console.log(sink);
