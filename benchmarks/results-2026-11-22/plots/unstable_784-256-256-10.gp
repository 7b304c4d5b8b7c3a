set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'benchmarks/results/plots/unstable_784-256-256-10.png'
load 'benchmarks/results/plots/unstable_784-256-256-10.body.gp'
set terminal svg size 960,600 noenhanced
set output 'benchmarks/results/plots/unstable_784-256-256-10.svg'
load 'benchmarks/results/plots/unstable_784-256-256-10.body.gp'
unset output
