(module
  (import "env" "memory" (memory 1))
  ;; Fused kernels for decoding steps: attention over a preallocated KV cache (the "arena"), layer
  ;; norm and GELU, each one call where tfjs ran up to nine ops; GELU and its gradient serve training too.
  ;; Layouts, row-major float32, byte pointers:
  ;;   qkv     [B, 3·D]        this step's projections (q | k | v), D = H·E
  ;;   kc, vc  [B, H, P, E]    cached keys and values; column s of row b holds position s
  ;;   starts  [B] int32       first real column of each row (columns before it are left padding)
  ;;   scores  [P]             scratch
  ;;   out     [B, D]          attention output, heads concatenated
  ;; E must be a multiple of 4 (the caller checks).

  ;; e^x for x ≤ 0 (scores after the max is subtracted): x = n·ln2 + r, |r| ≤ ln2/2, degree-6
  ;; polynomial for e^r (relative error ~1e-7), times 2^n built in the exponent bits.
  (func $exp (param $x f32) (result f32)
    (local $n f32) (local $r f32) (local $p f32)
    (if (f32.lt (local.get $x) (f32.const -87)) (then (return (f32.const 0))))
    (local.set $n (f32.nearest (f32.mul (local.get $x) (f32.const 1.44269504))))
    ;; ln2 in two parts (Cody–Waite), so r keeps its precision
    (local.set $r (f32.sub (f32.sub (local.get $x) (f32.mul (local.get $n) (f32.const 0.693359375)))
                           (f32.mul (local.get $n) (f32.const -2.12194440e-4))))
    ;; Horner: p = 1 + r(1 + r(1/2 + r(1/6 + r(1/24 + r(1/120 + r/720)))))
    (local.set $p (f32.add (f32.const 0.008333334) (f32.mul (local.get $r) (f32.const 0.0013888889))))
    (local.set $p (f32.add (f32.const 0.041666668) (f32.mul (local.get $r) (local.get $p))))
    (local.set $p (f32.add (f32.const 0.16666667) (f32.mul (local.get $r) (local.get $p))))
    (local.set $p (f32.add (f32.const 0.5) (f32.mul (local.get $r) (local.get $p))))
    (local.set $p (f32.add (f32.const 1) (f32.mul (local.get $r) (local.get $p))))
    (local.set $p (f32.add (f32.const 1) (f32.mul (local.get $r) (local.get $p))))
    (f32.mul (local.get $p)
      (f32.reinterpret_i32 (i32.shl (i32.add (i32.trunc_f32_s (local.get $n)) (i32.const 127)) (i32.const 23)))))

  ;; Writes this step's key and value of every row and head at column t, then attends from column
  ;; starts[b] to t inclusive: out[b, h] = softmax(scale · q·Kᵀ) · V.
  (func (export "attend")
    (param $qkv i32) (param $kc i32) (param $vc i32) (param $starts i32) (param $scores i32) (param $out i32)
    (param $B i32) (param $H i32) (param $E i32) (param $P i32) (param $t i32) (param $scale f32)
    (local $b i32) (local $h i32) (local $s i32) (local $e i32)
    (local $Eb i32) (local $Db i32) (local $row i32) (local $q i32) (local $kb i32) (local $vb i32)
    (local $o i32) (local $start i32) (local $p i32) (local $kp i32)
    (local $acc v128) (local $w v128) (local $d f32) (local $max f32) (local $sum f32)
    (local.set $Eb (i32.shl (local.get $E) (i32.const 2)))
    (local.set $Db (i32.mul (local.get $Eb) (local.get $H)))
    (local.set $b (i32.const 0))
    (block $bdone (loop $bloop
      (br_if $bdone (i32.ge_u (local.get $b) (local.get $B)))
      (local.set $row (i32.add (local.get $qkv) (i32.mul (local.get $b) (i32.mul (local.get $Db) (i32.const 3)))))
      (local.set $start (i32.load (i32.add (local.get $starts) (i32.shl (local.get $b) (i32.const 2)))))
      (local.set $h (i32.const 0))
      (block $hdone (loop $hloop
        (br_if $hdone (i32.ge_u (local.get $h) (local.get $H)))
        (local.set $q (i32.add (local.get $row) (i32.mul (local.get $h) (local.get $Eb))))
        ;; this (row, head)'s cache planes, [P, E] each
        (local.set $p (i32.mul (i32.add (i32.mul (local.get $b) (local.get $H)) (local.get $h)) (i32.mul (local.get $P) (local.get $Eb))))
        (local.set $kb (i32.add (local.get $kc) (local.get $p)))
        (local.set $vb (i32.add (local.get $vc) (local.get $p)))
        ;; store the new key and value at column t
        (local.set $p (i32.mul (local.get $t) (local.get $Eb)))
        (local.set $e (i32.const 0))
        (block $cdone (loop $cloop
          (br_if $cdone (i32.ge_u (local.get $e) (local.get $Eb)))
          (v128.store align=4 (i32.add (i32.add (local.get $kb) (local.get $p)) (local.get $e))
            (v128.load align=4 (i32.add (i32.add (local.get $q) (local.get $Db)) (local.get $e))))
          (v128.store align=4 (i32.add (i32.add (local.get $vb) (local.get $p)) (local.get $e))
            (v128.load align=4 (i32.add (i32.add (local.get $q) (i32.shl (local.get $Db) (i32.const 1))) (local.get $e))))
          (local.set $e (i32.add (local.get $e) (i32.const 16)))
          (br $cloop)))
        ;; scores[s] = scale · q·k_s, and their max
        (local.set $max (f32.const -inf))
        (local.set $s (local.get $start))
        (block $sdone (loop $sloop
          (br_if $sdone (i32.gt_s (local.get $s) (local.get $t)))
          (local.set $kp (i32.add (local.get $kb) (i32.mul (local.get $s) (local.get $Eb))))
          (local.set $acc (v128.const i32x4 0 0 0 0))
          (local.set $e (i32.const 0))
          (block $ddone (loop $dloop
            (br_if $ddone (i32.ge_u (local.get $e) (local.get $Eb)))
            (local.set $acc (f32x4.add (local.get $acc)
              (f32x4.mul (v128.load align=4 (i32.add (local.get $q) (local.get $e))) (v128.load align=4 (i32.add (local.get $kp) (local.get $e))))))
            (local.set $e (i32.add (local.get $e) (i32.const 16)))
            (br $dloop)))
          (local.set $d (f32.mul (local.get $scale)
            (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                     (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))))
          (f32.store (i32.add (local.get $scores) (i32.shl (local.get $s) (i32.const 2))) (local.get $d))
          (local.set $max (f32.max (local.get $max) (local.get $d)))
          (local.set $s (i32.add (local.get $s) (i32.const 1)))
          (br $sloop)))
        ;; softmax weights
        (local.set $sum (f32.const 0))
        (local.set $s (local.get $start))
        (block $edone (loop $eloop
          (br_if $edone (i32.gt_s (local.get $s) (local.get $t)))
          (local.set $kp (i32.add (local.get $scores) (i32.shl (local.get $s) (i32.const 2))))
          (local.set $d (call $exp (f32.sub (f32.load (local.get $kp)) (local.get $max))))
          (f32.store (local.get $kp) (local.get $d))
          (local.set $sum (f32.add (local.get $sum) (local.get $d)))
          (local.set $s (i32.add (local.get $s) (i32.const 1)))
          (br $eloop)))
        (local.set $sum (f32.div (f32.const 1) (local.get $sum)))
        ;; out = Σ_s w_s · v_s / Σ w
        (local.set $o (i32.add (local.get $out) (i32.add (i32.mul (local.get $b) (local.get $Db)) (i32.mul (local.get $h) (local.get $Eb)))))
        (local.set $e (i32.const 0))
        (block $zdone (loop $zloop
          (br_if $zdone (i32.ge_u (local.get $e) (local.get $Eb)))
          (v128.store align=4 (i32.add (local.get $o) (local.get $e)) (v128.const i32x4 0 0 0 0))
          (local.set $e (i32.add (local.get $e) (i32.const 16)))
          (br $zloop)))
        (local.set $s (local.get $start))
        (block $vdone (loop $vloop
          (br_if $vdone (i32.gt_s (local.get $s) (local.get $t)))
          (local.set $w (f32x4.splat (f32.mul (local.get $sum) (f32.load (i32.add (local.get $scores) (i32.shl (local.get $s) (i32.const 2)))))))
          (local.set $kp (i32.add (local.get $vb) (i32.mul (local.get $s) (local.get $Eb))))
          (local.set $e (i32.const 0))
          (block $adone (loop $aloop
            (br_if $adone (i32.ge_u (local.get $e) (local.get $Eb)))
            (v128.store align=4 (i32.add (local.get $o) (local.get $e))
              (f32x4.add (v128.load align=4 (i32.add (local.get $o) (local.get $e)))
                         (f32x4.mul (local.get $w) (v128.load align=4 (i32.add (local.get $kp) (local.get $e))))))
            (local.set $e (i32.add (local.get $e) (i32.const 16)))
            (br $aloop)))
          (local.set $s (i32.add (local.get $s) (i32.const 1)))
          (br $vloop)))
        (local.set $h (i32.add (local.get $h) (i32.const 1)))
        (br $hloop)))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br $bloop))))

  ;; Copies a prefill's keys kT [B, H, E, L] (transposed, as the model returns them) and values
  ;; v [B, H, L, E] into columns 0 … L−1 of the cache planes kc, vc [B, H, P, E].
  (func (export "fill")
    (param $kT i32) (param $v i32) (param $kc i32) (param $vc i32)
    (param $B i32) (param $H i32) (param $E i32) (param $L i32) (param $P i32)
    (local $g i32) (local $G i32) (local $e i32) (local $s i32) (local $src i32) (local $dst i32)
    (local.set $G (i32.mul (local.get $B) (local.get $H)))
    (local.set $g (i32.const 0))
    (block $gdone (loop $gloop
      (br_if $gdone (i32.ge_u (local.get $g) (local.get $G)))
      (local.set $s (i32.const 0))
      (block $sdone (loop $sloop
        (br_if $sdone (i32.ge_u (local.get $s) (local.get $L)))
        (local.set $dst (i32.shl (i32.mul (i32.add (i32.mul (local.get $g) (local.get $P)) (local.get $s)) (local.get $E)) (i32.const 2)))
        (local.set $e (i32.const 0))
        (block $edone (loop $eloop
          (br_if $edone (i32.ge_u (local.get $e) (local.get $E)))
          ;; kT[g, e, s] → kc[g, s, e]
          (local.set $src (i32.shl (i32.add (i32.mul (i32.add (i32.mul (local.get $g) (local.get $E)) (local.get $e)) (local.get $L)) (local.get $s)) (i32.const 2)))
          (f32.store (i32.add (i32.add (local.get $kc) (local.get $dst)) (i32.shl (local.get $e) (i32.const 2)))
            (f32.load (i32.add (local.get $kT) (local.get $src))))
          ;; v[g, s, e] → vc[g, s, e]
          (local.set $src (i32.shl (i32.add (i32.mul (i32.add (i32.mul (local.get $g) (local.get $L)) (local.get $s)) (local.get $E)) (local.get $e)) (i32.const 2)))
          (f32.store (i32.add (i32.add (local.get $vc) (local.get $dst)) (i32.shl (local.get $e) (i32.const 2)))
            (f32.load (i32.add (local.get $v) (local.get $src))))
          (local.set $e (i32.add (local.get $e) (i32.const 1)))
          (br $eloop)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $sloop)))
      (local.set $g (i32.add (local.get $g) (i32.const 1)))
      (br $gloop))))

  ;; y = (x − mean) / √(var + 1e-5) · g + b over each row of x [N, D]; D a multiple of 4.
  (func (export "layerNorm")
    (param $x i32) (param $g i32) (param $bias i32) (param $y i32) (param $N i32) (param $D i32)
    (local $n i32) (local $e i32) (local $Db i32) (local $row i32) (local $out i32)
    (local $acc v128) (local $m v128) (local $r v128) (local $d v128) (local $f f32)
    (local.set $Db (i32.shl (local.get $D) (i32.const 2)))
    (local.set $n (i32.const 0))
    (block $ndone (loop $nloop
      (br_if $ndone (i32.ge_u (local.get $n) (local.get $N)))
      (local.set $row (i32.add (local.get $x) (i32.mul (local.get $n) (local.get $Db))))
      (local.set $out (i32.add (local.get $y) (i32.mul (local.get $n) (local.get $Db))))
      ;; mean
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $e (i32.const 0))
      (block $mdone (loop $mloop
        (br_if $mdone (i32.ge_u (local.get $e) (local.get $Db)))
        (local.set $acc (f32x4.add (local.get $acc) (v128.load align=4 (i32.add (local.get $row) (local.get $e)))))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $mloop)))
      (local.set $f (f32.div
        (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                 (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))
        (f32.convert_i32_u (local.get $D))))
      (local.set $m (f32x4.splat (local.get $f)))
      ;; variance
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $e (i32.const 0))
      (block $vdone (loop $vloop
        (br_if $vdone (i32.ge_u (local.get $e) (local.get $Db)))
        (local.set $d (f32x4.sub (v128.load align=4 (i32.add (local.get $row) (local.get $e))) (local.get $m)))
        (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (local.get $d) (local.get $d))))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $vloop)))
      (local.set $f (f32.div
        (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                 (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))
        (f32.convert_i32_u (local.get $D))))
      (local.set $r (f32x4.splat (f32.div (f32.const 1) (f32.sqrt (f32.add (local.get $f) (f32.const 1e-5))))))
      ;; normalise, scale, shift
      (local.set $e (i32.const 0))
      (block $odone (loop $oloop
        (br_if $odone (i32.ge_u (local.get $e) (local.get $Db)))
        (v128.store align=4 (i32.add (local.get $out) (local.get $e))
          (f32x4.add
            (f32x4.mul (f32x4.mul (f32x4.sub (v128.load align=4 (i32.add (local.get $row) (local.get $e))) (local.get $m)) (local.get $r))
                       (v128.load align=4 (i32.add (local.get $g) (local.get $e))))
            (v128.load align=4 (i32.add (local.get $bias) (local.get $e)))))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $oloop)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $nloop))))

  ;; e^x on four lanes, as $exp (x clamped at −87, where e^x is below 1e-37).
  (func $exp4 (param $x v128) (result v128)
    (local $n v128) (local $r v128) (local $p v128)
    (local.set $x (f32x4.max (local.get $x) (v128.const f32x4 -87 -87 -87 -87)))
    (local.set $n (f32x4.nearest (f32x4.mul (local.get $x) (v128.const f32x4 1.44269504 1.44269504 1.44269504 1.44269504))))
    (local.set $r (f32x4.sub (f32x4.sub (local.get $x) (f32x4.mul (local.get $n) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375)))
                             (f32x4.mul (local.get $n) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
    (local.set $p (f32x4.add (v128.const f32x4 0.008333334 0.008333334 0.008333334 0.008333334) (f32x4.mul (local.get $r) (v128.const f32x4 0.0013888889 0.0013888889 0.0013888889 0.0013888889))))
    (local.set $p (f32x4.add (v128.const f32x4 0.041666668 0.041666668 0.041666668 0.041666668) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 0.16666667 0.16666667 0.16666667 0.16666667) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 0.5 0.5 0.5 0.5) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 1 1 1 1) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 1 1 1 1) (f32x4.mul (local.get $r) (local.get $p))))
    (f32x4.mul (local.get $p)
      (i32x4.shl (i32x4.add (i32x4.trunc_sat_f32x4_s (local.get $n)) (v128.const i32x4 127 127 127 127)) (i32.const 23))))

  ;; tanh(c·(x + 0.044715·x³)) on four lanes, the inner part of GELU: sign(u)·(1 − e^(−2|u|)) / (1 + e^(−2|u|)).
  (func $geluTanh4 (param $v v128) (result v128)
    (local $u v128) (local $z v128)
    (local.set $u (f32x4.mul (v128.const f32x4 0.7978845608 0.7978845608 0.7978845608 0.7978845608)
      (f32x4.add (local.get $v) (f32x4.mul (v128.const f32x4 0.044715 0.044715 0.044715 0.044715)
        (f32x4.mul (local.get $v) (f32x4.mul (local.get $v) (local.get $v)))))))
    (local.set $z (call $exp4 (f32x4.mul (v128.const f32x4 -2 -2 -2 -2) (f32x4.abs (local.get $u)))))
    (v128.bitselect (local.get $u)
      (f32x4.div (f32x4.sub (v128.const f32x4 1 1 1 1) (local.get $z)) (f32x4.add (v128.const f32x4 1 1 1 1) (local.get $z)))
      (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)))

  ;; The same for one float (the tails of the loops below).
  (func $geluTanh (param $v f32) (result f32)
    (f32x4.extract_lane 0 (call $geluTanh4 (f32x4.splat (local.get $v)))))

  ;; y = GELU(x), tanh approximation ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), over `count` floats.
  (func (export "gelu") (param $x i32) (param $y i32) (param $count i32)
    (local $i i32) (local $n i32) (local $v v128) (local $f f32)
    (local.set $n (i32.shl (local.get $count) (i32.const 2)))
    (local.set $i (i32.const 0))
    (block $done (loop $loop
      (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $n)))
      (local.set $v (v128.load align=4 (i32.add (local.get $x) (local.get $i))))
      (v128.store align=4 (i32.add (local.get $y) (local.get $i))
        (f32x4.mul (f32x4.mul (v128.const f32x4 0.5 0.5 0.5 0.5) (local.get $v))
                   (f32x4.add (v128.const f32x4 1 1 1 1) (call $geluTanh4 (local.get $v)))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $loop)))
    (block $tdone (loop $tloop
      (br_if $tdone (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $f (f32.load (i32.add (local.get $x) (local.get $i))))
      (f32.store (i32.add (local.get $y) (local.get $i))
        (f32.mul (f32.mul (f32.const 0.5) (local.get $f)) (f32.add (f32.const 1) (call $geluTanh (local.get $f)))))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $tloop))))

  ;; dx = dy · GELU'(x), GELU'(x) = ½(1 + th) + ½·x·(1 − th²)·c·(1 + 3·0.044715·x²), over `count` floats.
  (func (export "geluGrad") (param $x i32) (param $dy i32) (param $dx i32) (param $count i32)
    (local $i i32) (local $n i32) (local $v v128) (local $th v128) (local $f f32) (local $t f32)
    (local.set $n (i32.shl (local.get $count) (i32.const 2)))
    (local.set $i (i32.const 0))
    (block $done (loop $loop
      (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $n)))
      (local.set $v (v128.load align=4 (i32.add (local.get $x) (local.get $i))))
      (local.set $th (call $geluTanh4 (local.get $v)))
      (v128.store align=4 (i32.add (local.get $dx) (local.get $i))
        (f32x4.mul (v128.load align=4 (i32.add (local.get $dy) (local.get $i)))
          (f32x4.add
            (f32x4.mul (v128.const f32x4 0.5 0.5 0.5 0.5) (f32x4.add (v128.const f32x4 1 1 1 1) (local.get $th)))
            (f32x4.mul
              (f32x4.mul (f32x4.mul (v128.const f32x4 0.5 0.5 0.5 0.5) (local.get $v))
                         (f32x4.sub (v128.const f32x4 1 1 1 1) (f32x4.mul (local.get $th) (local.get $th))))
              (f32x4.mul (v128.const f32x4 0.7978845608 0.7978845608 0.7978845608 0.7978845608)
                         (f32x4.add (v128.const f32x4 1 1 1 1) (f32x4.mul (v128.const f32x4 0.134145 0.134145 0.134145 0.134145) (f32x4.mul (local.get $v) (local.get $v)))))))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $loop)))
    (block $tdone (loop $tloop
      (br_if $tdone (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $f (f32.load (i32.add (local.get $x) (local.get $i))))
      (local.set $t (call $geluTanh (local.get $f)))
      (f32.store (i32.add (local.get $dx) (local.get $i))
        (f32.mul (f32.load (i32.add (local.get $dy) (local.get $i)))
          (f32.add
            (f32.mul (f32.const 0.5) (f32.add (f32.const 1) (local.get $t)))
            (f32.mul (f32.mul (f32.mul (f32.const 0.5) (local.get $f)) (f32.sub (f32.const 1) (f32.mul (local.get $t) (local.get $t))))
                     (f32.mul (f32.const 0.7978845608) (f32.add (f32.const 1) (f32.mul (f32.const 0.134145) (f32.mul (local.get $f) (local.get $f)))))))))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $tloop))))

  ;; Layer norm's gradient over rows of x [N, D] (D a multiple of 4), ε = 1e-5, gain g [D]:
  ;;   n = (x − mean)·r with r = 1/√(var + ε), h = dy·g,
  ;;   dx = r·(h − mean(h) − n·mean(h·n)),  dg = Σ_rows dy·n,  db = Σ_rows dy.
  (func (export "layerNormGrad")
    (param $x i32) (param $g i32) (param $dy i32) (param $dx i32) (param $dg i32) (param $db i32) (param $N i32) (param $D i32)
    (local $n i32) (local $e i32) (local $Db i32) (local $row i32) (local $drow i32) (local $orow i32)
    (local $acc v128) (local $acc2 v128) (local $m v128) (local $r v128) (local $nv v128) (local $h v128) (local $d v128)
    (local $f f32) (local $mh v128) (local $mhn v128) (local $invD f32)
    (local.set $Db (i32.shl (local.get $D) (i32.const 2)))
    (local.set $invD (f32.div (f32.const 1) (f32.convert_i32_u (local.get $D))))
    ;; dg = db = 0
    (local.set $e (i32.const 0))
    (block $zdone (loop $zloop
      (br_if $zdone (i32.ge_u (local.get $e) (local.get $Db)))
      (v128.store align=4 (i32.add (local.get $dg) (local.get $e)) (v128.const i32x4 0 0 0 0))
      (v128.store align=4 (i32.add (local.get $db) (local.get $e)) (v128.const i32x4 0 0 0 0))
      (local.set $e (i32.add (local.get $e) (i32.const 16)))
      (br $zloop)))
    (local.set $n (i32.const 0))
    (block $ndone (loop $nloop
      (br_if $ndone (i32.ge_u (local.get $n) (local.get $N)))
      (local.set $row (i32.add (local.get $x) (i32.mul (local.get $n) (local.get $Db))))
      (local.set $drow (i32.add (local.get $dy) (i32.mul (local.get $n) (local.get $Db))))
      (local.set $orow (i32.add (local.get $dx) (i32.mul (local.get $n) (local.get $Db))))
      ;; mean and r, as the forward computes them
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $e (i32.const 0))
      (block $mdone (loop $mloop
        (br_if $mdone (i32.ge_u (local.get $e) (local.get $Db)))
        (local.set $acc (f32x4.add (local.get $acc) (v128.load align=4 (i32.add (local.get $row) (local.get $e)))))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $mloop)))
      (local.set $m (f32x4.splat (f32.mul (local.get $invD)
        (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                 (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))))
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $e (i32.const 0))
      (block $vdone (loop $vloop
        (br_if $vdone (i32.ge_u (local.get $e) (local.get $Db)))
        (local.set $d (f32x4.sub (v128.load align=4 (i32.add (local.get $row) (local.get $e))) (local.get $m)))
        (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (local.get $d) (local.get $d))))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $vloop)))
      (local.set $f (f32.mul (local.get $invD)
        (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                 (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))))
      (local.set $r (f32x4.splat (f32.div (f32.const 1) (f32.sqrt (f32.add (local.get $f) (f32.const 1e-5))))))
      ;; mean(h) and mean(h·n); dg += dy·n, db += dy
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $acc2 (v128.const i32x4 0 0 0 0))
      (local.set $e (i32.const 0))
      (block $hdone (loop $hloop
        (br_if $hdone (i32.ge_u (local.get $e) (local.get $Db)))
        (local.set $nv (f32x4.mul (f32x4.sub (v128.load align=4 (i32.add (local.get $row) (local.get $e))) (local.get $m)) (local.get $r)))
        (local.set $d (v128.load align=4 (i32.add (local.get $drow) (local.get $e))))
        (local.set $h (f32x4.mul (local.get $d) (v128.load align=4 (i32.add (local.get $g) (local.get $e)))))
        (local.set $acc (f32x4.add (local.get $acc) (local.get $h)))
        (local.set $acc2 (f32x4.add (local.get $acc2) (f32x4.mul (local.get $h) (local.get $nv))))
        (v128.store align=4 (i32.add (local.get $dg) (local.get $e))
          (f32x4.add (v128.load align=4 (i32.add (local.get $dg) (local.get $e))) (f32x4.mul (local.get $d) (local.get $nv))))
        (v128.store align=4 (i32.add (local.get $db) (local.get $e))
          (f32x4.add (v128.load align=4 (i32.add (local.get $db) (local.get $e))) (local.get $d)))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $hloop)))
      (local.set $mh (f32x4.splat (f32.mul (local.get $invD)
        (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                 (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))))
      (local.set $mhn (f32x4.splat (f32.mul (local.get $invD)
        (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc2)) (f32x4.extract_lane 1 (local.get $acc2)))
                 (f32.add (f32x4.extract_lane 2 (local.get $acc2)) (f32x4.extract_lane 3 (local.get $acc2)))))))
      ;; dx
      (local.set $e (i32.const 0))
      (block $odone (loop $oloop
        (br_if $odone (i32.ge_u (local.get $e) (local.get $Db)))
        (local.set $nv (f32x4.mul (f32x4.sub (v128.load align=4 (i32.add (local.get $row) (local.get $e))) (local.get $m)) (local.get $r)))
        (local.set $h (f32x4.mul (v128.load align=4 (i32.add (local.get $drow) (local.get $e))) (v128.load align=4 (i32.add (local.get $g) (local.get $e)))))
        (v128.store align=4 (i32.add (local.get $orow) (local.get $e))
          (f32x4.mul (local.get $r) (f32x4.sub (f32x4.sub (local.get $h) (local.get $mh)) (f32x4.mul (local.get $nv) (local.get $mhn)))))
        (local.set $e (i32.add (local.get $e) (i32.const 16)))
        (br $oloop)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $nloop))))
)
