set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_auto.png'
load 'benchmarks/results/plots/cactus_16-16-10_auto.body.gp'
set terminal svg size 960,600 noenhanced
set output 'benchmarks/results/plots/cactus_16-16-10_auto.svg'
load 'benchmarks/results/plots/cactus_16-16-10_auto.body.gp'
unset output
