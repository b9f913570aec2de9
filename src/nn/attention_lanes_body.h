// The rows-in-lanes attention kernel (see attention_lanes.h), written once for both vector
// widths. attention_lanes.cpp includes it once per width, inside a namespace of its own and a
// region compiled for that width's instructions; so it has no include guard and includes
// nothing (that file includes what it uses first). It expects a type V with
//   V::kLanes                 rows a vector (L);
//   V::F, V::I, V::U          GCC vector types of L floats, int32 and uint32;
//   V::splat(x)               x in every lane (a broadcast: 0 + x would be an addition);
//   V::fma(a, b, c)           a·b + c rounded once;
//   V::bits(m)                the lanes of a mask m (each −1 or 0) as the bits of a word;
//   V::load_first(p, n)       p[0], …, p[n − 1] in the first n lanes (n ≤ L), 0 in the others;
//   V::store_first(p, x, n)   the first n lanes of x to p[0], …, p[n − 1] (nothing else written).
// A group is L consecutive query rows of one (b, h), row i0 + l in lane l; a tile is L
// consecutive keys. Vectors indexed by key j hold key j for the group's rows.

using F = V::F;
using I = V::I;
using U = V::U;
constexpr int64_t L = V::kLanes;
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

inline F load(const float* p) {
  F x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
inline void store(float* p, const F& x) {
  std::memcpy(p, &x, sizeof x);
}
inline F splat(float x) {
  return V::splat(x);
}
inline F lane_index() {
  F x{};
  for (int64_t l = 0; l < L; ++l) x[l] = static_cast<float>(l);
  return x;
}
// The inverse of V::bits: lane l is −1 where bit l of `word` is set, else 0.
inline I from_bits(uint32_t word) {
  I bit{};
  for (int64_t l = 0; l < L; ++l) bit[l] = int32_t{1} << l;
  return (bit & static_cast<int32_t>(word)) != 0;
}

// ---- transposes ----------------------------------------------------------------------------
// Rows r and r + B exchange their off-diagonal blocks of B lanes; over B = L/2, …, 2, 1 that
// transposes an L × L tile (lanes are constants, as __builtin_shufflevector needs).
template <int64_t B, size_t... Is>
inline void swap_blocks(F& a, F& c, std::index_sequence<Is...>) {
  const F low = __builtin_shufflevector(a, c, static_cast<int>((Is & B) == 0 ? Is : L + Is - B)...);
  const F high =
      __builtin_shufflevector(a, c, static_cast<int>((Is & B) == 0 ? Is + B : L + Is)...);
  a = low;
  c = high;
}
template <int64_t B>
inline void transpose_stage(F* x) {
  for (int64_t r = 0; r < L; ++r)
    if ((r & B) == 0) swap_blocks<B>(x[r], x[r + B], std::make_index_sequence<L>());
}
inline void transpose(F* x) {
  if constexpr (L == 16) transpose_stage<8>(x);
  transpose_stage<4>(x);
  transpose_stage<2>(x);
  transpose_stage<1>(x);
}

// columns[c] (c < D), lane l = scale · rows[l · ld + c] for l < n, 0 for l ≥ n: L columns
// at a time, each block a transposed tile.
template <int64_t D>
inline void load_columns(const float* rows, int64_t ld, int64_t n, float scale, F* columns) {
  constexpr int64_t kBlock = D < L ? D : L;
  for (int64_t c0 = 0; c0 < D; c0 += kBlock) {
    F tile[L] = {};
    for (int64_t l = 0; l < n; ++l)
      std::memcpy(&tile[l], rows + l * ld + c0, kBlock * sizeof(float));
    transpose(tile);
    for (int64_t c = 0; c < kBlock; ++c) columns[c0 + c] = tile[c] * scale;
  }
}
// rows[l · ld + c] = columns[c][l] for l < n, c < D.
template <int64_t D>
inline void store_columns(const F* columns, int64_t n, float* rows, int64_t ld) {
  constexpr int64_t kBlock = D < L ? D : L;
  for (int64_t c0 = 0; c0 < D; c0 += kBlock) {
    F tile[L] = {};
    for (int64_t c = 0; c < kBlock; ++c) tile[c] = columns[c0 + c];
    transpose(tile);
    for (int64_t l = 0; l < n; ++l)
      std::memcpy(rows + l * ld + c0, &tile[l], kBlock * sizeof(float));
  }
}

// out[j · L + l] = rows[l · ld + j] for keys j < kc and rows l < n; 0 in the lanes from n:
// n rows of a [rows, T] block as a group's key-major [kc, L] block, a transposed tile of L
// keys at a time.
inline void rows_to_lanes(const float* rows, int64_t ld, int64_t n, int64_t kc, float* out) {
  for (int64_t j0 = 0; j0 < kc; j0 += L) {
    const int64_t m = std::min(L, kc - j0);
    F tile[L] = {};
    for (int64_t l = 0; l < n; ++l) tile[l] = V::load_first(rows + l * ld + j0, m);
    transpose(tile);  // tile[e]: key j0 + e for the n rows
    for (int64_t e = 0; e < m; ++e) store(out + (j0 + e) * L, tile[e]);
  }
}
// rows[l · ld + j] = lanes[j · L + l] for rows l < n and keys j < kc, 0 for kc ≤ j < T: the
// inverse, a tile at a time.
inline void lanes_to_rows(const float* lanes, int64_t n, int64_t kc, int64_t T, float* rows,
                          int64_t ld) {
  for (int64_t j0 = 0; j0 < kc; j0 += L) {
    const int64_t m = std::min(L, kc - j0);
    F tile[L] = {};
    for (int64_t e = 0; e < m; ++e) tile[e] = load(lanes + (j0 + e) * L);
    transpose(tile);  // tile[l]: row l over the keys j0, …, j0 + m − 1
    for (int64_t l = 0; l < n; ++l) V::store_first(rows + l * ld + j0, tile[l], m);
  }
  for (int64_t l = 0; l < n; ++l) std::fill(rows + l * ld + kc, rows + l * ld + T, 0.0f);
}

// ---- exp and the dropout hash, lane by lane -------------------------------------------------
// fast_exp (core/fast_math.h) in every lane, each product-sum fused.
inline F exp_lanes(const F& x) {
  using namespace detail::exp_constants;
  const F clamped_high = x < kClampHigh ? x : splat(kClampHigh);
  const F xc = x > kLowest ? clamped_high : splat(kLowest);  // NaN → −104, as fast_exp
  const F nf = V::fma(xc, splat(kLog2e), splat(kRound)) - kRound;
  F r = V::fma(nf, splat(-kLn2Hi), xc);
  r = V::fma(nf, splat(-kLn2Lo), r);
  F p = splat(kPoly[0]);
  for (int c = 1; c < 6; ++c) p = V::fma(p, r, splat(kPoly[c]));
  const F e = V::fma(p, r * r, r) + 1.0f;
  const I n = __builtin_convertvector(nf, I);
  const I n1 = n >> 1, n2 = n - n1;
  const F y = e * __builtin_bit_cast(F, (n1 + 127) << 23) * __builtin_bit_cast(F, (n2 + 127) << 23);
  const F low = x < kLowest ? F{} : y;
  const F high = x > kOverflow ? splat(std::numeric_limits<float>::infinity()) : low;
  return x != x ? x : high;
}

// mix32 (core/rng.h) in every lane.
inline U mix32_lanes(U x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

// Dropout's decisions for the rows of one group: the counters of α[b, h, i, ·] have the
// high half (b·H + h)·T + i (dropout() on α, as the block kernel draws them), so each lane
// has its own key, and a block of 32 keys takes 16 hashes (counter_bits16).
struct GroupDropout {
  U k0{}, k1{};
  U threshold{};
  F keep_scale{};
  U hashes[16];  // of the current block of 32 keys (start_block writes them before any read)
  GroupDropout(const Problem& p, int64_t w, int64_t i0) {
    if (p.dropout <= 0.0f) return;
    for (int64_t l = 0; l < L; ++l) {
      const auto hi = static_cast<uint32_t>(w * p.T + i0 + l);
      const CounterKey key = counter_key(p.dropout_seed, hi);
      k0[l] = key.k0;
      k1[l] = key.k1;
    }
    threshold = U{} + keep_threshold(p.dropout);
    keep_scale = splat(1.0f / (1.0f - p.dropout));
  }
  void start_block(int64_t j) {
    const auto block = static_cast<uint32_t>(j >> 5);
    for (uint32_t e = 0; e < 16; ++e)
      hashes[e] = mix32_lanes(mix32_lanes(((block << 4) | e) ^ k0) + k1);
  }
  // −1 in the lanes whose row keeps key j (its block started).
  I kept(int64_t j) const {
    const U h = hashes[j & 15];
    const U bits = (j & 16) != 0 ? h >> 16 : h & 0xffffU;
    return bits >= threshold;
  }
};

// ---- forward ---------------------------------------------------------------------------
// One (b, h): its columns of q, k, v and the keys and rows it attends over.
struct Head {
  int64_t b = 0, h = 0;
  const float *q = nullptr, *k = nullptr, *v = nullptr;  // row j at [j · d]
  const int32_t* mask = nullptr;
  int64_t real_end = 0;  // 1 + the last real key (0: none)
  int64_t rows_end = 0;  // rows computed: all, or those before real_end
};
template <int64_t D>
inline Head head_of(const Problem& p, int64_t w) {
  Head hd;
  hd.b = w / p.H;
  hd.h = w % p.H;
  const int64_t offset = hd.b * p.T * p.d + hd.h * D;
  hd.q = p.q + offset;
  hd.k = p.k + offset;
  hd.v = p.v + offset;
  hd.mask = p.key_mask + hd.b * p.T;
  hd.real_end = p.T;
  while (hd.real_end > 0 && !hd.mask[hd.real_end - 1]) --hd.real_end;
  hd.rows_end = p.skip_padded_queries ? hd.real_end : p.T;
  return hd;
}

// The rows of the group from i0 that are computed: 0 to L.
inline int64_t active_rows(const Problem& p, const Head& hd, int64_t i0) {
  return std::clamp<int64_t>(hd.rows_end - i0, 0, std::min(L, p.T - i0));
}

// The keys a group of rows from i0 attends over, real or not: [0, keys_of).
inline int64_t keys_of(const Problem& p, const Head& hd, int64_t i0, int64_t active) {
  return p.causal ? std::min(hd.real_end, i0 + active) : hd.real_end;
}

// S[j] = q_i · k_j (q scaled) + bias[j] (when given) for keys j < kc that are real, −inf in
// the lanes where j > i when causal; returns each lane's maximum (−inf: no admissible key; NaN is
// passed over, as the block kernel's maximum does).
template <int64_t D>
inline F scores(const Head& hd, int64_t d, const F* qT, int64_t i0, int64_t kc, bool causal,
                const float* bias, float* S) {
  const F rows = lane_index() + static_cast<float>(i0);
  const int32_t* mask = hd.mask;  // locals: the stores may alias anything
  const float* k = hd.k;
  F max = splat(kMinusInf);
  for (int64_t j = 0; j < kc; ++j) {
    if (!mask[j]) continue;
    const float* kj = k + j * d;
    F s = qT[0] * kj[0];
    for (int64_t c = 1; c < D; ++c) s = V::fma(qT[c], splat(kj[c]), s);
    if (bias) s += load(bias + j * L);
    if (causal && j > i0) s = rows >= static_cast<float>(j) ? s : splat(kMinusInf);
    store(S + j * L, s);
    max = s > max ? s : max;
  }
  return max;
}

// S[j] = exp(S[j] − max) for the real keys j < kc; returns 1 / (each lane's sum), 0 in the
// lanes without an admissible key (their α is 0, as the block kernel's).
inline F exponentials(const int32_t* mask, int64_t kc, const F& max, float* S) {
  const I none = max == kMinusInf;
  const F shift = none ? F{} : max;
  F sum{};
  for (int64_t j = 0; j < kc; ++j) {
    if (!mask[j]) continue;
    const F e = exp_lanes(load(S + j * L) - shift);
    store(S + j * L, e);
    sum += e;
  }
  return none ? F{} : 1.0f / sum;
}

// α_j = S[j] · inv, α'_j = α_j ⊙ keep / (1 − p) and z = Σ_j α'_j v_j over the real keys
// j < kc, in zT (D vectors: column c of z); α and the keep words are kept where given. With
// `keep_dropped`, S[j] becomes α'_j for every key j < kc (0 for the padding).
template <int64_t D>
inline void weighted_sum(const Problem& p, const Head& hd, int64_t w, int64_t i0, int64_t kc,
                         const F& inv, bool keep_dropped, float* S, float* alpha, uint32_t* keep,
                         F* zT) {
  // Locals, not reads through p and hd: the stores below (memcpy) may alias anything.
  const bool dropout = p.dropout > 0.0f;
  const int64_t d = p.d;
  const int32_t* mask = hd.mask;
  const float* v = hd.v;
  GroupDropout drop(p, w, i0);
  for (int64_t c = 0; c < D; ++c) zT[c] = F{};
  for (int64_t j = 0; j < kc; ++j) {
    if (dropout && j % 32 == 0) drop.start_block(j);
    if (!mask[j]) {
      if (keep_dropped) store(S + j * L, F{});
      continue;
    }
    F a = load(S + j * L) * inv;
    if (alpha) store(alpha + j * L, a);
    if (dropout) {
      const I kept = drop.kept(j);
      if (keep) keep[j] = V::bits(kept);
      a = kept != 0 ? a * drop.keep_scale : F{};
    }
    if (keep_dropped) store(S + j * L, a);
    const float* vj = v + j * d;
    for (int64_t c = 0; c < D; ++c) zT[c] = V::fma(a, splat(vj[c]), zT[c]);
  }
}

// The forward of work item w: z's columns of head h for every row of sequence b; alpha
// [groups, T, L] and keep [groups, T] are the item's own (null: not kept). The rows go in
// chunks of kTermChunkRows: the terms' bias of the chunk's rows first, their values' part of
// z last.
template <int64_t D>
void forward_item(const Problem& p, const Layout& layout, int64_t w, float* scratch, float* z,
                  float* alpha, uint32_t* keep) {
  const Head hd = head_of<D>(p, w);
  const AttentionTerms* terms = hd.rows_end > 0 ? p.terms : nullptr;
  const bool has_bias = terms && terms->has_bias(), has_values = terms && terms->has_values();
  float* S = scratch;                         // [keys, L]: a group's scores, then exponentials
  float* bias = S + layout.keys * L;          // [keys, L]: a group's R
  float* bias_rows = bias + layout.keys * L;  // [chunk, T]: R of the chunk's rows
  float* value_rows = bias_rows + layout.chunk_rows() * p.T;  // [chunk, T]: their α'
  float* z_head = z + hd.b * p.T * p.d + hd.h * D;
  for (int64_t c0 = 0; c0 < p.T; c0 += kTermChunkRows) {
    const int64_t c1 = std::min(p.T, c0 + kTermChunkRows);
    const int64_t hook_rows = std::clamp<int64_t>(hd.rows_end - c0, 0, c1 - c0);
    if (has_bias && hook_rows > 0) {
      std::fill_n(bias_rows, hook_rows * p.T, 0.0f);
      terms->add_bias(hd.b, hd.h, c0, c0 + hook_rows, p.T, hd.q + c0 * p.d, p.d, bias_rows, p.T);
    }
    for (int64_t i0 = c0; i0 < c1; i0 += L) {
      const int64_t g = i0 / L, present = std::min(L, p.T - i0);
      const int64_t active = active_rows(p, hd, i0);
      float* z_rows = z_head + i0 * p.d;
      for (int64_t l = active; l < present; ++l) std::fill_n(z_rows + l * p.d, D, 0.0f);
      if (active == 0) continue;
      const int64_t kc = keys_of(p, hd, i0, active);
      F qT[D];
      load_columns<D>(hd.q + i0 * p.d, p.d, active, p.scale, qT);
      if (has_bias) rows_to_lanes(bias_rows + (i0 - c0) * p.T, p.T, active, kc, bias);
      const F max = scores<D>(hd, p.d, qT, i0, kc, p.causal, has_bias ? bias : nullptr, S);
      const F inv = exponentials(hd.mask, kc, max, S);
      F zT[D];
      weighted_sum<D>(p, hd, w, i0, kc, inv, has_values, S, alpha ? alpha + g * p.T * L : nullptr,
                      keep ? keep + g * p.T : nullptr, zT);
      store_columns<D>(zT, active, z_rows, p.d);
      if (has_values) lanes_to_rows(S, active, kc, p.T, value_rows + (i0 - c0) * p.T, p.T);
    }
    if (has_values && hook_rows > 0)
      terms->add_values(hd.b, hd.h, c0, c0 + hook_rows, p.T, value_rows, p.T, z_head + c0 * p.d,
                        p.d);
  }
}

// ---- backward --------------------------------------------------------------------------
// Given dz, for the group's rows (lanes ≥ active have dz = 0):
//   dα_j = (dz_i · v_j + dU[i, j]) ⊙ keep/(1 − p),  D_i = Σ_j α_j dα_j,
//   dS_j = α_j (dα_j − D_i),  dq_i = scale · Σ_j dS_j k_j;
// dU: the value terms' dz_i · U[i, j] as the group's rows of [rows, T] (null: none).
// dS_j is written for every key j < key_end (0 where the group does not attend), for the
// keys' pass. dA: scratch [keys, L].
template <int64_t D>
inline void rows_backward(const Problem& p, const Head& hd, int64_t i0, int64_t active,
                          int64_t key_end, const float* alpha, const uint32_t* keep,
                          const float* dz, const float* dU, float* dA, float* dS, float* dq) {
  const bool dropout = p.dropout > 0.0f;
  const int64_t d = p.d;  // locals: the stores may alias anything
  const int32_t* mask = hd.mask;
  const float *k = hd.k, *v = hd.v;
  const int64_t kc = keys_of(p, hd, i0, active);
  const int64_t row0 = (hd.b * p.T + i0) * d + hd.h * D;
  const F keep_scale = splat(dropout ? 1.0f / (1.0f - p.dropout) : 1.0f);
  F dzT[D];
  load_columns<D>(dz + row0, d, active, 1.0f, dzT);
  if (dU) rows_to_lanes(dU, p.T, active, kc, dA);
  F dot{};
  for (int64_t j = 0; j < kc; ++j) {
    if (!mask[j]) continue;
    const float* vj = v + j * d;
    F da = dzT[0] * vj[0];
    for (int64_t c = 1; c < D; ++c) da = V::fma(dzT[c], splat(vj[c]), da);
    if (dU) da += load(dA + j * L);
    if (dropout) da = from_bits(keep[j]) != 0 ? da * keep_scale : F{};
    dot = V::fma(load(alpha + j * L), da, dot);
    store(dA + j * L, da);
  }
  F dqT[D] = {};
  for (int64_t j = 0; j < key_end; ++j) {
    if (j >= kc || !mask[j]) {
      store(dS + j * L, F{});
      continue;
    }
    const F ds = load(alpha + j * L) * (load(dA + j * L) - dot);
    store(dS + j * L, ds);
    const float* kj = k + j * d;
    for (int64_t c = 0; c < D; ++c) dqT[c] = V::fma(ds, splat(kj[c]), dqT[c]);
  }
  for (int64_t c = 0; c < D; ++c) dqT[c] *= p.scale;
  store_columns<D>(dqT, active, dq + row0, d);
}

// α'_j = α_j ⊙ keep/(1 − p) of the group's rows for every key j < key_end (0 where the group
// does not attend), for the keys' pass and the value terms.
inline void dropped_weights(const Problem& p, const Head& hd, int64_t kc, int64_t key_end,
                            const float* alpha, const uint32_t* keep, float* Ap) {
  const bool dropout = p.dropout > 0.0f;
  const int32_t* mask = hd.mask;  // a local: the stores may alias anything
  const F keep_scale = splat(dropout ? 1.0f / (1.0f - p.dropout) : 1.0f);
  for (int64_t j = 0; j < key_end; ++j) {
    if (j >= kc || !mask[j]) {
      store(Ap + j * L, F{});
      continue;
    }
    const F a = load(alpha + j * L);
    store(Ap + j * L, dropout ? (from_bits(keep[j]) != 0 ? a * keep_scale : F{}) : a);
  }
}

// acc[c], lane e = Σ_i tiles[i, j0 + e] · rows[i · d + c] over every row i in order, for the
// tile of keys [j0, j0 + L): tiles are the groups' [keys, L] blocks (dS or α'), transposed a
// tile at a time so that a row's values over the tile's keys fill one vector.
template <int64_t D>
inline void tile_products(const Problem& p, const Layout& layout, const Head& hd, int64_t j0,
                          const float* tiles, const float* rows, F* acc) {
  const int64_t d = p.d;  // a local: the loads below may alias anything
  for (int64_t c = 0; c < D; ++c) acc[c] = F{};
  for (int64_t g = 0; g < layout.groups; ++g) {
    const int64_t i0 = g * L, active = active_rows(p, hd, i0);
    if (active == 0 || (p.causal && i0 + active <= j0)) continue;  // no row reaches the tile
    F tile[L];
    const float* at = tiles + (g * layout.keys + j0) * L;
    for (int64_t e = 0; e < L; ++e) tile[e] = load(at + e * L);
    transpose(tile);  // tile[l]: row i0 + l over the tile's keys
    for (int64_t l = 0; l < active; ++l) {
      const float* row = rows + (i0 + l) * d;
      for (int64_t c = 0; c < D; ++c) acc[c] = V::fma(tile[l], splat(row[c]), acc[c]);
    }
  }
}

// For the keys [j0, j0 + L): dk_j = scale · Σ_i dS[i, j] q_i and dv_j = Σ_i α'[i, j] dz_i,
// one after the other (D accumulators each, not 2·D at once: registers).
template <int64_t D>
inline void keys_backward(const Problem& p, const Layout& layout, const Head& hd, int64_t j0,
                          const float* dS, const float* Ap, const float* dz, float* dk, float* dv) {
  const int64_t head = hd.b * p.T * p.d + hd.h * D;
  const int64_t n = std::min(L, p.T - j0);
  F acc[D];
  tile_products<D>(p, layout, hd, j0, dS, hd.q, acc);
  for (int64_t c = 0; c < D; ++c) acc[c] *= p.scale;
  store_columns<D>(acc, n, dk + head + j0 * p.d, p.d);
  tile_products<D>(p, layout, hd, j0, Ap, dz + head, acc);
  store_columns<D>(acc, n, dv + head + j0 * p.d, p.d);
}

// The value terms' part of every computed row: α' ([groups, keys, L]) as [rows_end, T] rows
// in `value_rows`, then one values_backward call, which adds its parameters' gradients and
// writes dU[i, j] = dz_i · U[i, j] ([rows_end, T]).
inline void value_gradients(const Problem& p, const Layout& layout, const Head& hd, const float* Ap,
                            const float* dz, float* value_rows, float* dU,
                            const AttentionTerms::GradBuffers& grads) {
  for (int64_t g = 0; g * L < hd.rows_end; ++g) {
    const int64_t i0 = g * L, active = std::min(L, hd.rows_end - i0);
    lanes_to_rows(Ap + g * layout.keys * L, active, keys_of(p, hd, i0, active), p.T,
                  value_rows + i0 * p.T, p.T);
  }
  std::fill_n(dU, hd.rows_end * p.T, 0.0f);
  const int64_t offset = hd.q - p.q;  // of the head's first row in q and dz
  p.terms->values_backward(hd.b, hd.h, 0, hd.rows_end, p.T, value_rows, p.T, dz + offset, p.d, dU,
                           p.T, grads);
}

// The bias's part: dS of every computed row as [rows_end, T] rows in `work` (0 past the keys a
// row's group attends over), then one bias_backward call, which adds to dq (after the groups
// wrote it) and the parameters' gradients. One call per (b, h), whatever the vector width:
// terms that sum per call (KERPLE, FIRE, Shaw's products) then give the same bits at both
// widths, and those with a cost per call (FIRE passes each distance's sum through its MLP)
// pay it once.
inline void bias_gradients(const Problem& p, const Layout& layout, const Head& hd, const float* dS,
                           float* work, float* dq, const AttentionTerms::GradBuffers& grads) {
  for (int64_t g = 0; g * L < hd.rows_end; ++g) {
    const int64_t i0 = g * L, active = std::min(L, hd.rows_end - i0);
    lanes_to_rows(dS + g * layout.keys * L, active, keys_of(p, hd, i0, active), p.T,
                  work + i0 * p.T, p.T);
  }
  const int64_t offset = hd.q - p.q;  // of the head's first row in q, dq and dz
  p.terms->bias_backward(hd.b, hd.h, 0, hd.rows_end, p.T, hd.q, p.d, work, p.T, dq + offset, p.d,
                         grads);
}

// The backward of work item w: its head's columns of dq, dk, dv, and the terms' parameter
// gradients (the values' before the groups, the bias's from their dS). scratch: the layout's
// backward_scratch() floats.
template <int64_t D>
void backward_item(const Problem& p, const Layout& layout, int64_t w, const float* alpha,
                   const uint32_t* keep, const float* dz, float* scratch, float* dq, float* dk,
                   float* dv, const AttentionTerms::GradBuffers& grads) {
  const Head hd = head_of<D>(p, w);
  const AttentionTerms* terms = hd.rows_end > 0 ? p.terms : nullptr;
  const int64_t key_end = p.causal ? std::min(hd.real_end, hd.rows_end) : hd.real_end;
  const int64_t tiles_end = (key_end + L - 1) / L * L;
  float* dA = scratch;                                 // [keys, L]
  float* dS = dA + layout.keys * L;                    // [groups, keys, L]
  float* Ap = dS + layout.groups * layout.keys * L;    // [groups, keys, L]
  float* rows = Ap + layout.groups * layout.keys * L;  // [rows_end, T]: α', then dS
  float* dU = rows + p.T * p.T;                        // [rows_end, T]: dz · U
  const bool has_values = terms && terms->has_values();
  for (int64_t g = 0; g < layout.groups; ++g) {
    const int64_t active = active_rows(p, hd, g * L);
    if (active == 0) continue;
    dropped_weights(p, hd, keys_of(p, hd, g * L, active), tiles_end, alpha + g * p.T * L,
                    keep ? keep + g * p.T : nullptr, Ap + g * layout.keys * L);
  }
  if (has_values) value_gradients(p, layout, hd, Ap, dz, rows, dU, grads);
  for (int64_t g = 0; g < layout.groups; ++g) {
    const int64_t i0 = g * L, active = active_rows(p, hd, i0);
    if (active == 0) continue;
    const int64_t at = g * p.T;
    rows_backward<D>(p, hd, i0, active, tiles_end, alpha + at * L, keep ? keep + at : nullptr, dz,
                     has_values ? dU + i0 * p.T : nullptr, dA, dS + g * layout.keys * L, dq);
  }
  if (terms && terms->has_bias()) bias_gradients(p, layout, hd, dS, rows, dq, grads);
  for (int64_t j0 = 0; j0 < key_end; j0 += L)
    keys_backward<D>(p, layout, hd, j0, dS, Ap, dz, dk, dv);
}
