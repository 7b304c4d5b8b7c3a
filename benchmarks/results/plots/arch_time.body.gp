set title 'median seconds per instance by architecture (every regime), a line per mode'
set logscale y
set grid
set ylabel 'seconds (log)'
set xtics rotate by -20
set key outside right
set offsets 0.2, 0.2, 0, 0
plot 'out/full/plots/arch_time.dat' using 1:3:xtic(2) with linespoints lw 2 pt 7 title 'auto', 'out/full/plots/arch_time.dat' using 1:4:xtic(2) with linespoints lw 2 pt 7 title 'z3', 'out/full/plots/arch_time.dat' using 1:5:xtic(2) with linespoints lw 2 pt 7 title 'glpk', 'out/full/plots/arch_time.dat' using 1:6:xtic(2) with linespoints lw 2 pt 7 title 'smooth', 'out/full/plots/arch_time.dat' using 1:7:xtic(2) with linespoints lw 2 pt 7 title 'direct'
