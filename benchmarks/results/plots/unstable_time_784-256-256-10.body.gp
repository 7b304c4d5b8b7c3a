set multiplot layout 2,3 title 'unstable ReLUs vs seconds, 784,256,256,10 (a point per instance)'
set logscale y
set grid
set xrange [-1:*]
set xlabel 'unstable ReLUs'
set ylabel 'seconds (log)'
set key top left
set title 'mode auto'
plot 'out/full/plots/unstable_time_784-256-256-10.dat' index 0 using 1:2 with points pt 7 ps 0.5 title 'decided', '' index 1 using 1:2 with points pt 6 ps 0.5 title 'unknown'
set title 'mode z3'
plot 'out/full/plots/unstable_time_784-256-256-10.dat' index 2 using 1:2 with points pt 7 ps 0.5 title 'decided', '' index 3 using 1:2 with points pt 6 ps 0.5 title 'unknown'
set title 'mode glpk'
plot 'out/full/plots/unstable_time_784-256-256-10.dat' index 4 using 1:2 with points pt 7 ps 0.5 title 'decided', '' index 5 using 1:2 with points pt 6 ps 0.5 title 'unknown'
set title 'mode smooth'
plot 'out/full/plots/unstable_time_784-256-256-10.dat' index 6 using 1:2 with points pt 7 ps 0.5 title 'decided', '' index 7 using 1:2 with points pt 6 ps 0.5 title 'unknown'
set title 'mode direct'
plot 'out/full/plots/unstable_time_784-256-256-10.dat' index 8 using 1:2 with points pt 7 ps 0.5 title 'decided', '' index 9 using 1:2 with points pt 6 ps 0.5 title 'unknown'
unset multiplot
