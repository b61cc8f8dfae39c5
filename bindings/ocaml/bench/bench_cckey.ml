(* OCaml binding bench: Cckey against the pure OCaml recipe (Digest.string
   per field, bench/../test/oracle.ml's recipe) on the same inputs, and a
   memo hit against a Hashtbl lookup.

     CCKEY_BUILD_DIR=$PWD/build dune exec --root bindings/ocaml bench/bench_cckey.exe

   Every candidate's keys are compared with the recipe's before timing.
   Single calls: the best of 3 runs of at least 0.3 s each. Batches: the
   best call of each candidate (a batch call is 15-200 ms: one scheduler
   hiccup on a 2-core machine is a large part of it), its calls in a row, in
   9 interleaved rounds for the short batch (see [batch]). *)

let hex s = Digest.to_hex (Digest.string s)

let recipe ~device ~name ~source ?(options = []) () =
  let canon =
    List.stable_sort (fun (a, _) (b, _) -> String.compare a b) options
    |> List.map (fun (k, v) -> hex k ^ "=" ^ hex v)
    |> String.concat ","
  in
  String.concat ":" [ hex device; hex name; hex source; hex canon ]

(* Seconds per call of f, best of 3 runs of >= 0.3 s. *)
let per_call f =
  let run () =
    let t0 = Unix.gettimeofday () in
    let n = ref 0 in
    while Unix.gettimeofday () -. t0 < 0.3 do
      for _ = 1 to 100 do
        ignore (Sys.opaque_identity (f ()))
      done;
      n := !n + 100
    done;
    (Unix.gettimeofday () -. t0) /. float !n
  in
  List.fold_left min infinity (List.init 3 (fun _ -> run ()))

(* Seconds per call of f, best of [calls] calls in a row. (Interleaving the
   candidates call by call was tried: each then pays for the garbage of the
   one before it, the recipe's ~40 MB above all, or, after a forced
   collection, for growing the heap again; neither is how a program calls
   make_keys.) *)
let once ?(calls = 15) f =
  let run () =
    let t0 = Unix.gettimeofday () in
    ignore (Sys.opaque_identity (f ()));
    Unix.gettimeofday () -. t0
  in
  List.fold_left min infinity (List.init calls (fun _ -> run ()))

let row name t base = Printf.printf "| %s | %.0f | %.2fx |\n%!" name (t *. 1e9) (base /. t)

let device = "NVIDIA H200|580.159.04"
let name = "vec_add"
let options = [ ("-O", "3"); ("-arch", "sm_90") ]

let single_key () =
  let rng = Random.State.make [| 7 |] in
  let source = String.init 4096 (fun _ -> Char.chr (32 + Random.State.int rng 95)) in
  let want = recipe ~device ~name ~source ~options () in
  assert (Cckey.make_key ~device ~name ~source ~options () = want);
  (* A new source per call: a handle made and the source digested each time. *)
  let copies = Array.init 4096 (fun i -> Printf.sprintf "%04d" i ^ String.sub source 4 4092) in
  let i = ref 0 in
  let fresh () =
    i := (!i + 1) land 4095;
    Cckey.make_key ~device ~name ~source:copies.(!i) ~options ()
  in
  let names = Array.init 4096 (fun i -> Printf.sprintf "kernel_%d" i) in
  let new_name () =
    i := (!i + 1) land 4095;
    Cckey.make_key ~device ~name:names.(!i) ~source ~options ()
  in
  let tbl = Hashtbl.create 64 in
  Hashtbl.replace tbl (device, name, options) want;
  let short = Hashtbl.create 64 in
  Hashtbl.replace short want want;
  let t_recipe = per_call (fun () -> recipe ~device ~name ~source ~options ()) in
  let t_hit = per_call (fun () -> Cckey.make_key ~device ~name ~source ~options ()) in
  let t_tbl = per_call (fun () -> Hashtbl.find tbl (device, name, options)) in
  let t_short = per_call (fun () -> Hashtbl.find short want) in
  print_endline "\n| call (4 KiB source) | ns per key | x recipe |\n| --- | ---: | ---: |";
  row "pure OCaml recipe (Digest.string per field)" t_recipe t_recipe;
  row "make_key, a new source each call (a handle made)" (per_call fresh) t_recipe;
  row "make_key, same source, a new name each call (source digest memoised)" (per_call new_name) t_recipe;
  row "make_key, memo hit" t_hit t_recipe;
  row "Hashtbl.find, key (device, name, options)" t_tbl t_recipe;
  row "Hashtbl.find, key a 131-byte string" t_short t_recipe;
  Printf.printf "\nmemo hit / Hashtbl.find (device, name, options) = %.2f; / Hashtbl.find (131-byte string) = %.2f\n"
    (t_hit /. t_tbl) (t_hit /. t_short)

(* 10^5 tuples as a kernel suite has them: 1000 sources of 4 KiB, each with
   100 kernels (entry points), on 4 devices, with 3 option sets. *)
let suite_batch n =
  let rng = Random.State.make [| 11 |] in
  let sources = Array.init (n / 100) (fun _ -> String.init 4096 (fun _ -> Char.chr (32 + Random.State.int rng 95))) in
  let devices = Array.init 4 (Printf.sprintf "GPU %d|580.159.04") in
  let option_sets = [| []; [ ("-O", "3") ]; [ ("-arch", "sm_90"); ("-O", "2") ] |] in
  Array.init n (fun i -> (devices.(i mod 4), Printf.sprintf "kernel_%d" i, sources.(i / 100), option_sets.(i mod 3)))

(* 10^5 short tuples, every field distinct but the device. *)
let short_batch n =
  Array.init n (fun i ->
      ( Printf.sprintf "GPU %d|580.159.04" (i mod 4),
        Printf.sprintf "kernel_%d" i,
        Printf.sprintf "__global__ void kernel_%d(float *x) { x[0] = %d; }" i i,
        if i mod 2 = 0 then [] else [ ("-O", "3") ] ))

(* Each candidate's calls in a row, as above, in [rounds] rounds one after
   another: on a shared machine whose speed moves by a third between
   minutes, one round of each can put the candidates in different weather.
   A round is 3 recipe calls and 5 of each make_keys candidate, so that the
   short candidates' calls (a fraction of a second a round) are spread over
   as many stretches of the machine's time as the recipe's. Every candidate
   keeps its best call over all rounds. *)
let batch ?(rounds = 9) ?(recipe_calls = 3) ?(calls = 5) label tuples =
  let rec_keys () = Array.map (fun (device, name, source, options) -> recipe ~device ~name ~source ~options ()) tuples in
  assert (Cckey.make_keys ~backend:`Cpu tuples = rec_keys ());
  let best = Array.make 3 infinity in
  for _ = 1 to rounds do
    let ts =
      [| once ~calls:recipe_calls rec_keys; once ~calls (fun () -> Cckey.make_keys ~backend:`Cpu tuples);
         once ~calls (fun () -> Cckey.make_keys tuples) |]
    in
    Array.iteri (fun i t -> best.(i) <- min best.(i) t) ts
  done;
  let t_rec = best.(0) and t_cpu = best.(1) and t_auto = best.(2) in
  Printf.printf "| %s | %.3f | %.3f | %.3f | %.1fx |\n%!" label t_rec t_cpu t_auto (t_rec /. t_cpu)

let () =
  Printf.printf "cckey %s, OCaml %s\n" (Cckey.version ()) Sys.ocaml_version;
  single_key ();
  print_endline
    "\n| batch of 10^5 | recipe s | make_keys cpu s | make_keys auto s | make_keys cpu x recipe |\n| --- | ---: | ---: | ---: | ---: |";
  (* One round of 15 calls each: its recipe calls take about a second each. *)
  batch ~rounds:1 ~recipe_calls:15 ~calls:15 "suite: 1000 sources of 4 KiB x 100 kernels" (suite_batch 100_000);
  batch "short, distinct names and sources" (short_batch 100_000)
