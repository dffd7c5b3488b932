// SPDX-License-Identifier: GPL-3.0-or-later
// The flame graph's script, embedded in every SVG after "var fg = {...}" (W width, xpad,
// fw average character width, ty text offset in a frame, total, nametype).
// A frame is <g><title>NAME (N samples, P%)</title><rect/>[<text/>] child frames...</g>.
"use strict";
var frames, details, unzoombtn, searchbtn, matchedtxt, zoomed = null, searching = false;
var SVGNS = "http://www.w3.org/2000/svg";

function fg_init() {
	frames = document.getElementById("frames");
	details = document.getElementById("details").firstChild;
	unzoombtn = document.getElementById("unzoom");
	searchbtn = document.getElementById("search");
	matchedtxt = document.getElementById("matched");
	frames.addEventListener("click", function (e) {
		var g = frame_of(e.target);
		if (g)
			zoom(g);
	});
	frames.addEventListener("mouseover", function (e) {
		var g = frame_of(e.target);
		if (g)
			details.nodeValue = fg.nametype + " " + g.firstElementChild.textContent;
	});
	frames.addEventListener("mouseout", function () { details.nodeValue = " "; });
	unzoombtn.addEventListener("click", unzoom);
	searchbtn.addEventListener("click", search_prompt);
	window.addEventListener("keydown", function (e) {
		if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {
			e.preventDefault();
			search_prompt();
		} else if (e.keyCode === 27) {
			reset_search();
			unzoom();
		}
	});
}
window.addEventListener("load", fg_init);

function frame_of(t) {
	return t && t.tagName === "rect" && t.parentNode !== frames ? t.parentNode : null;
}
function title_of(g) { return g.firstElementChild.textContent; }
function name_of(g) {
	var t = title_of(g);
	return t.substring(0, t.lastIndexOf(" ("));
}
function samples_of(g) {
	var t = title_of(g), s = t.substring(t.lastIndexOf(" (") + 2);
	return parseFloat(s.substring(0, s.indexOf(" ")).replace(/,/g, ""));
}
function orig(g) {
	if (g._x === undefined) {
		var r = g.children[1];
		g._x = parseFloat(r.getAttribute("x"));
		g._w = parseFloat(r.getAttribute("width"));
	}
}

// Move frame G to X with width W and fit its label.
function place(g, x, w) {
	var r = g.children[1], t = g.children[2], name, n;
	r.setAttribute("x", x.toFixed(1));
	r.setAttribute("width", w.toFixed(1));
	n = Math.floor(w / fg.fw);
	if (!t || t.tagName !== "text") {
		if (n < 3)
			return;
		t = document.createElementNS(SVGNS, "text");
		t.setAttribute("y", (parseFloat(r.getAttribute("y")) + fg.ty).toFixed(1));
		g.insertBefore(t, r.nextSibling);
	}
	name = name_of(g);
	t.setAttribute("x", (x + 3).toFixed(1));
	t.textContent = n < 3 ? "" : n < name.length ? name.substring(0, n - 2) + ".." : name;
}

// Zoom on frame G: it and its descendants fill the width, ancestors are dimmed, the rest
// is hidden.
function zoom(g) {
	var full = fg.W - 2 * fg.xpad, ratio, x0, d, i, a, n, c;
	if (zoomed)
		unzoom();
	zoomed = g;
	unzoombtn.classList.remove("hide");
	orig(g);
	x0 = g._x;
	ratio = full / g._w;
	for (a = g.parentNode; a !== frames; a = a.parentNode) {
		orig(a);
		a.classList.add("parent");
		place(a, fg.xpad, full);
	}
	for (n = g; n.parentNode !== frames; n = n.parentNode) {
		c = n.parentNode.children;
		for (i = 0; i < c.length; i++)
			if (c[i] !== n && c[i].tagName === "g")
				c[i].classList.add("hide");
	}
	place(g, fg.xpad, full);
	d = g.getElementsByTagName("g");
	for (i = 0; i < d.length; i++) {
		orig(d[i]);
		place(d[i], fg.xpad + (d[i]._x - x0) * ratio, d[i]._w * ratio);
	}
}

function unzoom() {
	var all, i, g;
	if (!zoomed)
		return;
	zoomed = null;
	unzoombtn.classList.add("hide");
	all = frames.getElementsByTagName("g");
	for (i = 0; i < all.length; i++) {
		g = all[i];
		g.classList.remove("parent", "hide");
		if (g._x !== undefined)
			place(g, g._x, g._w);
	}
}

function search_prompt() {
	var term;
	if (searching) {
		reset_search();
		return;
	}
	term = prompt("Enter a search term (regexp allowed, eg: ^ext4_)", "");
	if (term)
		search(term);
}

// Highlight the frames whose name matches the regular expression TERM; show the share of
// all samples under the outermost matches. Returns that share in percent.
function search(term) {
	var re, all, i, g, r, sum = 0, last = null, pct;
	try {
		re = new RegExp(term);
	} catch (e) {
		details.nodeValue = "Invalid regular expression: " + term;
		return -1;
	}
	reset_search();
	all = frames.getElementsByTagName("g");
	for (i = 0; i < all.length; i++) {
		g = all[i];
		if (!re.test(name_of(g)))
			continue;
		r = g.children[1];
		r._fill = r.getAttribute("fill");
		r.setAttribute("fill", "rgb(230,0,230)");
		if (last && last.contains(g))
			continue;	// nested in a match already counted
		sum += samples_of(g);
		last = g;
	}
	searching = true;
	searchbtn.classList.add("show");
	searchbtn.firstChild.nodeValue = "Reset Search";
	pct = fg.total > 0 ? 100 * sum / fg.total : 0;
	matchedtxt.classList.remove("hide");
	matchedtxt.firstChild.nodeValue = "Matched: " + pct.toFixed(1) + "%";
	return pct;
}

function reset_search() {
	var all = frames.getElementsByTagName("rect"), i;
	if (!searching)
		return;
	for (i = 0; i < all.length; i++)
		if (all[i]._fill !== undefined) {
			all[i].setAttribute("fill", all[i]._fill);
			delete all[i]._fill;
		}
	searching = false;
	searchbtn.classList.remove("show");
	searchbtn.firstChild.nodeValue = "Search";
	matchedtxt.classList.add("hide");
}
