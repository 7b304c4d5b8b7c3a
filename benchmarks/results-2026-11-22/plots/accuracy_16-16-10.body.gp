set title 'test accuracy (%) of 16,16,10: trained net and its ReLU substitution'
set style data histograms
set style fill solid 0.8
set xtics rotate by -30
set key top right
set yrange [0:*]
set grid ytics
plot 'benchmarks/results/plots/accuracy_16-16-10.dat' using 2:xtic(1) title 'trained (smooth)', '' using 3 title 'after ReLU substitution'
