set termoption noenhanced
set terminal pngcairo size 960,600 noenhanced
set output 'out/full/plots/cactus_784-256-256-256-256-10_direct.png'
load 'out/full/plots/cactus_784-256-256-256-256-10_direct.body.gp'
set terminal svg size 960,600 noenhanced
set output 'out/full/plots/cactus_784-256-256-256-256-10_direct.svg'
load 'out/full/plots/cactus_784-256-256-256-256-10_direct.body.gp'
unset output
