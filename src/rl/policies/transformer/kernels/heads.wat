(module
  (import "env" "memory" (memory 1))
  ;; Moves one block between the projection layout and the attention-heads layout, a permutation:
  ;;   rows  [B·T, S·H·E]   row b·T + t holds S blocks, each of H heads of E values
  ;;   heads [B, H, T, E]   block s of every row
  ;; S = 3 for q|k|v, 1 for the attention output. Byte pointers, float32.
  (func $move (param $rows i32) (param $heads i32) (param $B i32) (param $T i32) (param $S i32) (param $s i32) (param $H i32) (param $E i32) (param $toHeads i32)
    (local $b i32) (local $t i32) (local $h i32) (local $e i32)
    (local $r i32) (local $p i32) (local $Eb i32) (local $Tb i32)
    (local.set $Eb (i32.shl (local.get $E) (i32.const 2)))
    (local.set $Tb (i32.mul (local.get $T) (local.get $Eb)))
    (local.set $b (i32.const 0))
    (block $bdone (loop $bloop
      (br_if $bdone (i32.ge_u (local.get $b) (local.get $B)))
      (local.set $t (i32.const 0))
      (block $tdone (loop $tloop
        (br_if $tdone (i32.ge_u (local.get $t) (local.get $T)))
        ;; block s of row b·T + t
        (local.set $r (i32.add (local.get $rows) (i32.mul (local.get $Eb) (i32.mul (local.get $H)
          (i32.add (i32.mul (i32.add (i32.mul (local.get $b) (local.get $T)) (local.get $t)) (local.get $S)) (local.get $s))))))
        ;; heads[b, 0, t, 0]
        (local.set $p (i32.add (local.get $heads)
          (i32.add (i32.mul (i32.mul (local.get $b) (local.get $H)) (local.get $Tb)) (i32.mul (local.get $t) (local.get $Eb)))))
        (local.set $h (i32.const 0))
        (block $hdone (loop $hloop
          (br_if $hdone (i32.ge_u (local.get $h) (local.get $H)))
          (local.set $e (i32.const 0))
          (block $edone (loop $eloop
            (br_if $edone (i32.ge_u (local.get $e) (local.get $Eb)))
            (if (local.get $toHeads)
              (then (f32.store (i32.add (local.get $p) (local.get $e)) (f32.load (i32.add (local.get $r) (local.get $e)))))
              (else (f32.store (i32.add (local.get $r) (local.get $e)) (f32.load (i32.add (local.get $p) (local.get $e))))))
            (local.set $e (i32.add (local.get $e) (i32.const 4)))
            (br $eloop)))
          (local.set $r (i32.add (local.get $r) (local.get $Eb)))
          (local.set $p (i32.add (local.get $p) (local.get $Tb)))
          (local.set $h (i32.add (local.get $h) (i32.const 1)))
          (br $hloop)))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $tloop)))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br $bloop))))
  (func (export "toHeads") (param $rows i32) (param $heads i32) (param $B i32) (param $T i32) (param $S i32) (param $s i32) (param $H i32) (param $E i32)
    (call $move (local.get $rows) (local.get $heads) (local.get $B) (local.get $T) (local.get $S) (local.get $s) (local.get $H) (local.get $E) (i32.const 1)))
  (func (export "fromHeads") (param $heads i32) (param $rows i32) (param $B i32) (param $T i32) (param $S i32) (param $s i32) (param $H i32) (param $E i32)
    (call $move (local.get $rows) (local.get $heads) (local.get $B) (local.get $T) (local.get $S) (local.get $s) (local.get $H) (local.get $E) (i32.const 0)))
)
