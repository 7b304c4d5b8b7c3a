set title 'mean unstable ReLUs per instance (784,256,256,256,256,10, symbolic bounds)'
set style data histograms
set style fill solid 0.8
set xtics rotate by -30
set key top right
set yrange [0:*]
set grid ytics
plot 'out/full/plots/accuracy_784-256-256-256-256-10.dat' using 5:xtic(1) title 'eps 0.01', 'out/full/plots/accuracy_784-256-256-256-256-10.dat' using 6 title 'eps 0.02'
