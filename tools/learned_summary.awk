# Reads a compare.csv of `pelab compare` (group,length,in_training,mean,...) and prints one
# sentence for docs/tasks.md: which schemes learned the task in distribution (mean sequence
# accuracy over the training lengths ≥ 0.90). Extrapolation means something only for them.
#   awk -f tools/learned_summary.awk runs/tasks/copy/compare.csv
BEGIN { FS = "," }
NR > 1 && $3 == "true" {
  if (!($1 in count)) order[++groups] = $1
  sum[$1] += $4
  count[$1]++
}
END {
  best = ""; yes = ""; no = ""; n_yes = 0; n_no = 0
  for (i = 1; i <= groups; i++) {
    g = order[i]; m = sum[g] / count[g]
    if (best == "" || m > best_mean) { best = g; best_mean = m }
    if (m >= 0.9) yes = yes (n_yes++ ? ", " : "") "`" g "`"
    else no = no (n_no++ ? ", " : "") sprintf("`%s` %.2f", g, m)
  }
  if (n_yes == 0)
    printf "**Not learned at these settings:** the best in distribution, `%s`, reaches %.2f, so the extrapolation columns say nothing about position here.\n", best, best_mean
  else if (n_no == 0)
    printf "Every scheme learns the task in distribution (≥ 0.90).\n"
  else
    printf "Learned in distribution (≥ 0.90) by %s; not by %s, whose extrapolation columns therefore say nothing.\n", yes, no
}
