# Called by scale_plot.sh: dat has columns n, then wall keys/s of the three
# candidates, then their keys per CPU second.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1200,900 noenhanced font ",10"
} else {
    set terminal png size 1200,900 noenhanced
}
set output out
set datafile missing "-"
# One colour per candidate, the same in both panels.
set linetype 1 linecolor rgb "#7f7f7f" linewidth 2 pointtype 7
set linetype 2 linecolor rgb "#1f77b4" linewidth 2 pointtype 5
set linetype 3 linecolor rgb "#d62728" linewidth 2 pointtype 9
set logscale xy
set grid xtics ytics mytics
set key bottom right
set xlabel "tuples per batch (n)"
set format x "1e%L"
set multiplot layout 2,1 title heading
set title "keys/s, wall clock (log scales; higher is better)"
set ylabel "keys/s"
plot for [i=2:4] dat using 1:i with linespoints title columnheader(i) lt (i-1)
set title "keys per CPU second of the process (log scales)"
set ylabel "keys/CPU s"
plot for [i=5:7] dat using 1:i with linespoints title columnheader(i) lt (i-4)
unset multiplot
