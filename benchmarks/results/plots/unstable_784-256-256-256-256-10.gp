set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'out/full/plots/unstable_784-256-256-256-256-10.png'
load 'out/full/plots/unstable_784-256-256-256-256-10.body.gp'
set terminal svg size 960,600 noenhanced
set output 'out/full/plots/unstable_784-256-256-256-256-10.svg'
load 'out/full/plots/unstable_784-256-256-256-256-10.body.gp'
unset output
