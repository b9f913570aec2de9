$map << EOD
0.001 0 0 0 0 0 0 0 0 0
0.013 0 0 0.001 0 0 0.018 0.053 0 0.034
0.789 0.673 0.669 0.942 0.791 0.999 0.783 0.878 0.992 0.841
0 0 0 0 0 0 0 0 0 0
EOD
set xtics ('none (rec.)' 0, 'sinusoidal (rec.)' 1, 'learned (rec.)' 2, 'relative (rec.)' 3, 'rotary (rec.)' 4, 'alibi (rec.)' 5, 't5_causal_d32 (rec.)' 6, 'fire (rec.)' 7, 'kerple (rec.)' 8, 'sandwich (rec.)' 9) rotate by 45 right
set ytics ('copy' 0, 'reverse' 1, 'flip_flop' 2, 'decimal_addition' 3)
set yrange [3.5:-0.5] reverse
set xrange [-0.5:9.5]
set cbrange [0:1]
set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')
set title 'suite lm: max over seeds of sequence_accuracy beyond training'
unset key
set terminal pngcairo size 1000,388 font 'sans,11'
set termoption noenhanced
set output 'suite_heatmap.png'
plot $map matrix with image, $map matrix using 1:2:($3 == $3 ? sprintf('%.2f', $3) : '') with labels
unset output
set terminal svg size 1000,388 font 'sans,13' background rgb 'white'
set termoption noenhanced
set output 'suite_heatmap.svg'
plot $map matrix with image, $map matrix using 1:2:($3 == $3 ? sprintf('%.2f', $3) : '') with labels
unset output
