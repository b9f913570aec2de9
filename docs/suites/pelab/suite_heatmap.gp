$map << EOD
0 0 0 0.99875 0.02625 0.16125 0.13125
0 0 0 0 0 0 0
0 0 0 0 0 0 0
0.25625 0 0 0.80125 0.20875 0.06 0.36375
0 0 0 0 0 0 0
0.1375 0.1375 0.1225 0.13625 0.13 0.1325 0.14125
0 0 0 0 0 0 0
0.5 0.51125 0.51125 0.4975 0.5125 0.50625 0.50125
0.72625 0.5 0.50875 0.9225 0.66625 0.7975 0.7675
0.485 0.2125 0.2075 0.42375 0.42125 0.47 0.525
0.20125 0.22375 0.2125 0.22 0.2375 0.20375 0.21625
0 0 0 0 0 0 0
0 0 0 0 0 0 0
0.21625 0.41875 0.45625 1 0.8 0.24 0.85125
0.22375 0.1925 0.18 0.2275 0.24625 0.235 0.22875
EOD
set xtics ('none (rec.)' 0, 'sinusoidal (rec.)' 1, 'learned (rec.)' 2, 'relative_k9 (rec.)' 3, 'rotary (rec.)' 4, 'alibi (rec.)' 5, 't5_d16 (rec.)' 6) rotate by 45 right
set ytics ('shift' 0, 'copy' 1, 'reverse' 2, 'sort' 3, 'duplicate' 4, 'missing_duplicate' 5, 'odds_first' 6, 'parity' 7, 'even_pairs' 8, 'cycle_navigation' 9, 'modular_arithmetic' 10, 'binary_addition' 11, 'local_sum' 12, 'long_range' 13, 'associative_recall' 14)
set yrange [14.5:-0.5] reverse
set xrange [-0.5:6.5]
set cbrange [0:1]
set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')
set title 'suite pelab: max over seeds of sequence_accuracy beyond training'
unset key
set terminal pngcairo size 790,740 font 'sans,11'
set termoption noenhanced
set output 'suite_heatmap.png'
plot $map matrix with image, $map matrix using 1:2:($3 == $3 ? sprintf('%.2f', $3) : '') with labels
unset output
set terminal svg size 790,740 font 'sans,13' background rgb 'white'
set termoption noenhanced
set output 'suite_heatmap.svg'
plot $map matrix with image, $map matrix using 1:2:($3 == $3 ? sprintf('%.2f', $3) : '') with labels
unset output
