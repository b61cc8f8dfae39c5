# cckey_bench's plot. cckey_bench writes the three data files and calls
#   gnuplot -e "msgs='m.dat'; keys='k.dat'; ratios='r.dat'; nm=N; nk=K; nr=R;
#               mc='1 2 3'; kc='4 5'; rc='1 2 3 4 5'; out='x.png'; heading='...'" plot.gp
# msgs: one row per message workload, one column of GB/s per candidate.
# keys: one row per key workload, one column of keys/s per candidate.
# ratios: every workload, each candidate's speed-up over the workload's
#   baseline (OpenSSL on 1 thread for digests, the naive loop for keys).
# mc, kc, rc: each column's colour, the candidate's place in the whole run,
#   so that a candidate has one colour in every panel.
# nm, nk or nr may be 0 (that panel is left out); "-" marks a candidate that
# did not run on that workload.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1400,1400 noenhanced font ",10"
} else {
    set terminal png size 1400,1400 noenhanced
}
set output out
# Sixteen distinguishable colours: the default cycle repeats after eight.
array palette[16] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", \
                     "#bcbd22", "#17becf", "#393b79", "#e7ba52", "#637939", "#843c39", "#7b4173", "#000000"]
do for [i=1:16] { set linetype i linecolor rgb palette[i] }
set linetype cycle 16
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics mytics
set key outside right top
set xtics nomirror
panels = (nm > 0) + (nk > 0) + (nr > 0)
set multiplot layout panels,1 title heading

if (nm > 0) {
    set title "MD5 throughput on message workloads (GB/s, log scale; higher is better)"
    set ylabel "GB/s"
    plot for [i=2:nm+1] msgs using i:xtic(1) title columnheader(i) lt int(word(mc, i-1))
}
if (nk > 0) {
    set title "keys/s on the suite and memo workloads (log scale; higher is better)"
    set ylabel "keys/s"
    plot for [i=2:nk+1] keys using i:xtic(1) title columnheader(i) lt int(word(kc, i-1))
}
if (nr > 0) {
    set title "speed-up over the baseline (x OpenSSL MD5() on 1 thread for digests, x the naive cckey_make_key loop for keys; log scale)"
    set ylabel "x baseline"
    plot for [i=2:nr+1] ratios using i:xtic(1) title columnheader(i) lt int(word(rc, i-1))
}
unset multiplot
