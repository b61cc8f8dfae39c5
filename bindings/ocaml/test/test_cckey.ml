(* The OCaml binding against Oracle (Stdlib.Digest) on random tuples, the
   weak memo, threads, the store and the error cases. Exits non-zero on the
   first failure. *)

let failures = ref 0

let check name cond =
  if not cond then begin
    incr failures;
    Printf.printf "FAIL: %s\n%!" name
  end

let check_eq name ~want got =
  if want <> got then begin
    incr failures;
    Printf.printf "FAIL: %s\n  want %S\n  got  %S\n%!" name want got
  end

(* ---- random tuples ---------------------------------------------------- *)

(* Bytes that stress the join: separators, NUL, non-UTF-8. *)
let special = [| ""; ":"; ","; "="; "\000"; "\255\254"; "a:b,c=d"; "k\000=v" |]

let random_string rng max_len =
  if Random.State.int rng 10 < 3 then special.(Random.State.int rng (Array.length special))
  else String.init (Random.State.int rng (max_len + 1)) (fun _ -> Char.chr (Random.State.int rng 256))

let random_options rng =
  (* Three candidate keys, so duplicate keys are common. *)
  let keys = Array.init 3 (fun _ -> random_string rng 8) in
  List.init (Random.State.int rng 6) (fun _ -> (keys.(Random.State.int rng 3), random_string rng 8))

(* Sources come from a pool of physical strings, so make_key meets each one
   many times (memo hits) as well as for the first time. *)
let random_tuples seed n =
  let rng = Random.State.make [| seed |] in
  let pool = Array.init 200 (fun _ -> random_string rng 300) in
  Array.init n (fun _ ->
      ( random_string rng 24,
        random_string rng 24,
        pool.(Random.State.int rng (Array.length pool)),
        random_options rng ))

let oracle (device, name, source, options) = Oracle.make_key ~device ~name ~source ~options ()

let test_known () =
  (* Two keys whose options sort: the second pair's key is a prefix. *)
  let options = [ ("ab", "1"); ("a", "2"); ("a", "3") ] in
  check_eq "known key" ~want:(Oracle.make_key ~device:"d" ~name:"n" ~source:"s" ~options ())
    (Cckey.make_key ~device:"d" ~name:"n" ~source:"s" ~options ());
  check "key length" (String.length (Cckey.make_key ~device:"" ~name:"" ~source:"" ()) = 131)

let test_random_make_key () =
  let tuples = random_tuples 1 100_000 in
  let bad = ref 0 in
  Array.iter
    (fun ((device, name, source, options) as t) ->
      if Cckey.make_key ~device ~name ~source ~options () <> oracle t then incr bad)
    tuples;
  check (Printf.sprintf "make_key on 100000 random tuples (%d differ)" !bad) (!bad = 0)

let test_random_make_keys () =
  let tuples = random_tuples 2 100_000 in
  let want = Array.map oracle tuples in
  check "make_keys (auto) on 100000 random tuples" (Cckey.make_keys tuples = want);
  check "make_keys (cpu, 1 thread)" (Cckey.make_keys ~backend:`Cpu ~threads:1 tuples = want);
  check "make_keys (cpu, blocks on a helper thread)" (Cckey.make_keys ~backend:`Cpu ~threads:2 tuples = want);
  let small = Array.sub tuples 0 3000 in
  (match Cckey.make_keys_info ~backend:`Opencl ~verify:`All small with
   | keys, used, _ ->
     check "make_keys on OpenCL with verify" (keys = Array.sub want 0 3000);
     check ("OpenCL batch ran on opencl, not " ^ used) (String.length used >= 6 && String.sub used 0 6 = "opencl")
   | exception Cckey.Error { status = 4; detail; _ } -> Printf.printf "skip: no OpenCL device: %s\n" detail);
  (* make_keys reuses its last config for the same settings: a sampled
     verify's warning must not outlive its batch. *)
  let big = Array.init 50_000 (fun i -> ("d", Printf.sprintf "k%d" i, Printf.sprintf "s%d" i, [])) in
  (match Cckey.make_keys_info ~backend:`Opencl ~verify:`Sample big with
   | _, _, warning ->
     check ("sampled verify warns: " ^ warning) (String.length warning > 0);
     let keys, _, warning = Cckey.make_keys_info ~backend:`Opencl ~verify:`Sample small in
     check_eq "no warning left from the last batch" ~want:"" warning;
     check "keys after a reused config" (keys = Array.sub want 0 3000)
   | exception Cckey.Error { status = 4; _ } -> ());
  check "empty batch" (Cckey.make_keys [||] = [||]);
  (* A few physical option lists shared by many tuples (copied once per
     batch), among fresh lists of the same content. *)
  let rng = Random.State.make [| 4 |] in
  let shared = Array.init 5 (fun _ -> random_options rng) in
  let tuples =
    Array.mapi
      (fun i (device, name, source, options) ->
        (device, name, source, if i mod 3 = 0 then options else shared.(Random.State.int rng 5)))
      (random_tuples 5 20_000)
  in
  check "make_keys with shared option lists" (Cckey.make_keys ~backend:`Cpu tuples = Array.map oracle tuples)

(* make_key returns a source's last key again when (device, name, options)
   are equal by content: calls that differ in one byte, one option, the
   order of options or only physically must each get their own key. *)
let test_repeated_calls () =
  let rng = Random.State.make [| 3 |] in
  let source = random_string rng 300 in
  let variants =
    [| ("d", "n", []); ("d", "n", [ ("-O", "3") ]); ("d", "n", [ ("-O", "3"); ("-O", "2") ]);
       ("d", "n", [ ("-O", "2"); ("-O", "3") ]); ("d", "n", [ ("-O", "4") ]); ("d", "n", [ ("-o", "3") ]);
       ("d", "n\000", [ ("-O", "3") ]); ("d\000", "n", [ ("-O", "3") ]); ("", "", []); ("dn", "", []);
       ("d", "", [ ("n", "") ]) |]
  in
  let bad = ref 0 in
  for _ = 1 to 20_000 do
    let device, name, options = variants.(Random.State.int rng (Array.length variants)) in
    (* Half the time fresh copies: equal content, other strings. *)
    let copy s = if Random.State.bool rng then s else Bytes.to_string (Bytes.of_string s) in
    let device = copy device and name = copy name in
    let options = List.map (fun (k, v) -> (copy k, copy v)) options in
    let t = (device, name, source, options) in
    if Cckey.make_key ~device ~name ~source ~options () <> oracle t then incr bad
  done;
  check (Printf.sprintf "make_key repeated on one source, 20000 calls (%d differ)" !bad) (!bad = 0)

let test_source_handles () =
  let rng = Random.State.make [| 3 |] in
  for _ = 1 to 100 do
    let source = random_string rng 500 in
    let src = Cckey.Source.create source in
    check_eq "Source.digest" ~want:(Oracle.hex source) (Cckey.Source.digest src);
    for _ = 1 to 20 do
      let device = random_string rng 8 and name = random_string rng 8 and options = random_options rng in
      let want = Oracle.make_key ~device ~name ~source ~options () in
      check_eq "Source.key" ~want (Cckey.Source.key src ~device ~name ~options ());
      check_eq "Source.key again (memo)" ~want (Cckey.Source.key src ~device ~name ~options ())
    done
  done;
  (* A long source takes the path that releases the runtime lock. *)
  let source = random_string rng 0 ^ String.make 200_000 'x' ^ "\000end" in
  check_eq "long source" ~want:(Oracle.make_key ~device:"d" ~name:"n" ~source ())
    (Cckey.make_key ~device:"d" ~name:"n" ~source ())

(* ---- the memo dies with its string ------------------------------------ *)

(* Keys for n fresh strings (heap-allocated, unlike literals) that nothing
   else refers to once this returns. *)
let use_fresh_sources n =
  for i = 1 to n do
    let source = Bytes.to_string (Bytes.of_string (Printf.sprintf "kernel %d source" i)) in
    ignore (Sys.opaque_identity (Cckey.make_key ~device:"d" ~name:"n" ~source ()))
  done
[@@inline never]

let test_memo_is_weak () =
  Gc.full_major ();
  let base = Cckey.Debug.live_sources () in
  let kept = Bytes.to_string (Bytes.of_string "a source that stays alive") in
  let key = Cckey.make_key ~device:"d" ~name:"n" ~source:kept () in
  use_fresh_sources 1000;
  check "1001 handles while the strings live" (Cckey.Debug.live_sources () >= base + 1);
  Gc.full_major ();
  Gc.full_major ();
  check_eq "only the live string's handle survives a full major GC"
    ~want:(string_of_int (base + 1))
    (string_of_int (Cckey.Debug.live_sources ()));
  check_eq "the kept string still hits" ~want:key (Cckey.make_key ~device:"d" ~name:"n" ~source:kept ());
  check_eq "a second call made no new handle" ~want:(string_of_int (base + 1))
    (string_of_int (Cckey.Debug.live_sources ()));
  ignore (Sys.opaque_identity kept);
  (* A second physical copy of the same bytes is another memo entry. *)
  let copy = Bytes.to_string (Bytes.of_string kept) in
  check_eq "equal bytes, other string: same key" ~want:key (Cckey.make_key ~device:"d" ~name:"n" ~source:copy ());
  check "... and its own handle" (Cckey.Debug.live_sources () = base + 2);
  ignore (Sys.opaque_identity (kept, copy))

(* ---- threads ----------------------------------------------------------- *)

let test_threads_share_a_source () =
  Gc.full_major ();
  let base = Cckey.Debug.live_sources () in
  let source = Bytes.to_string (Bytes.make 8192 's') in
  let errors = Atomic.make 0 in
  let worker id () =
    let rng = Random.State.make [| 100 + id |] in
    for i = 1 to 5000 do
      let device = Printf.sprintf "dev%d" (i mod 7) and options = random_options rng in
      let name = random_string rng 6 in
      if Cckey.make_key ~device ~name ~source ~options () <> Oracle.make_key ~device ~name ~source ~options ()
      then Atomic.incr errors;
      if i mod 500 = 0 then Thread.yield ()
    done
  in
  let batch id () =
    let tuples = random_tuples (200 + id) 5000 in
    if Cckey.make_keys ~threads:2 tuples <> Array.map oracle tuples then Atomic.incr errors
  in
  let threads = List.init 4 (fun id -> Thread.create (worker id) ()) @ List.init 2 (fun id -> Thread.create (batch id) ()) in
  List.iter Thread.join threads;
  check (Printf.sprintf "4 threads on one source + 2 batches (%d wrong)" (Atomic.get errors)) (Atomic.get errors = 0);
  Gc.full_major ();
  check "one handle for the shared source" (Cckey.Debug.live_sources () = base + 1);
  ignore (Sys.opaque_identity source)

(* A CPU batch runs in blocks, each keyed on a helper thread while the next
   one is copied out of the OCaml heap: another thread that meanwhile
   replaces the array's tuples with fresh copies, allocates (minor
   collections move young strings) and compacts the heap must not change
   a key. *)
let test_batch_while_the_heap_moves () =
  let tuples = random_tuples 300 100_000 in
  let want = Array.map oracle tuples in
  let stop = Atomic.make false in
  let mover () =
    let i = ref 0 in
    while not (Atomic.get stop) do
      let j = !i mod Array.length tuples in
      let d, n, s, o = tuples.(j) in
      tuples.(j) <- (Bytes.to_string (Bytes.of_string d), Bytes.to_string (Bytes.of_string n),
                     Bytes.to_string (Bytes.of_string s), List.map (fun (k, v) -> (k ^ "", v ^ "")) o);
      i := !i + 7919;
      if !i mod 50 = 0 then Gc.compact () else if !i mod 7 = 0 then Thread.yield ()
    done
  in
  let t = Thread.create mover () in
  let wrong = ref 0 in
  for _ = 1 to 5 do
    if Cckey.make_keys ~backend:`Cpu tuples <> want then incr wrong;
    if Cckey.make_keys ~backend:`Cpu ~threads:1 tuples <> want then incr wrong
  done;
  Atomic.set stop true;
  Thread.join t;
  check (Printf.sprintf "make_keys while another thread moves the heap (%d wrong)" !wrong) (!wrong = 0)

(* A batch's keys are made together in the major heap: half of them dropped,
   the heap swept and compacted, the other half must still be intact, and
   so must the keys of a batch made afterwards in the freed space. *)
let test_keys_outlive_their_neighbours () =
  let tuples = random_tuples 301 70_000 in
  let want = Array.map oracle tuples in
  let keys = Cckey.make_keys ~backend:`Cpu tuples in
  Array.iteri (fun i _ -> if i mod 2 = 0 then keys.(i) <- "") keys;
  Gc.full_major ();
  Gc.compact ();
  let again = Cckey.make_keys ~backend:`Cpu tuples in
  Gc.compact ();
  let bad = ref 0 in
  Array.iteri (fun i k -> if (i mod 2 = 1 && k <> want.(i)) || again.(i) <> want.(i) then incr bad) keys;
  check (Printf.sprintf "keys after their neighbours are collected and the heap compacted (%d wrong)" !bad) (!bad = 0)

(* make_keys runs a GC slice of its own while the library keys the last
   block, after allocating that block's strings, which it fills afterwards.
   With a collector that compacts at the end of every cycle and runs
   cycles often, that slice moves the strings (and the arrays) under it. *)
let test_batch_with_a_compacting_gc () =
  let tuples = random_tuples 302 70_000 in
  let want = Array.map oracle tuples in
  let saved = Gc.get () in
  Gc.set { saved with Gc.max_overhead = 0; space_overhead = 5 };
  let wrong = ref 0 and compactions = ref 0 in
  for _ = 1 to 6 do
    let before = (Gc.quick_stat ()).Gc.compactions in
    let keys = Cckey.make_keys ~backend:`Cpu tuples in
    compactions := !compactions + (Gc.quick_stat ()).Gc.compactions - before;
    if keys <> want then incr wrong
  done;
  Gc.set saved;
  check (Printf.sprintf "make_keys under a GC that compacts every cycle (%d wrong)" !wrong) (!wrong = 0);
  check "the heap was compacted during make_keys" (!compactions > 0)

(* ---- store and errors ---------------------------------------------------- *)

let temp_dir () =
  let d = Filename.concat (Filename.get_temp_dir_name ()) (Printf.sprintf "cckey-ml-%d" (Unix.getpid ())) in
  ignore (Sys.command (Printf.sprintf "rm -rf %s" (Filename.quote d)));
  d

let expect_error name status f =
  match f () with
  | _ -> check (name ^ ": no error") false
  | exception Cckey.Error e ->
    check (Printf.sprintf "%s: status %d, want %d (%s: %s)" name e.status status e.strerror e.detail) (e.status = status);
    check (name ^ ": strerror") (e.strerror <> "")

let test_store () =
  let dir = temp_dir () in
  let s = Cckey.Store.open_ dir in
  let key = Cckey.make_key ~device:"d" ~name:"n" ~source:"s" () in
  check "miss" (Cckey.Store.get s key = None);
  Cckey.Store.put s key "payload\000with NUL";
  check "hit" (Cckey.Store.get s key = Some "payload\000with NUL");
  Cckey.Store.put s key "";
  check "empty payload" (Cckey.Store.get s key = Some "");
  let st = Cckey.Store.stats s in
  check "stats" (st.entries = 1 && st.bytes > 0 && st.max_bytes = 0 && st.temp_files = 0);
  expect_error "put with a bad key" 1 (fun () -> Cckey.Store.put s "not a key" "x");
  expect_error "get with a short key" 1 (fun () -> Cckey.Store.get s (String.sub key 0 130));
  Cckey.Store.close s;
  Cckey.Store.close s;
  check "closed store" (match Cckey.Store.get s key with _ -> false | exception Invalid_argument _ -> true);
  let small = Cckey.Store.open_ ~max_bytes:1000 (Filename.concat dir "small") in
  expect_error "entry over max_bytes" 1 (fun () -> Cckey.Store.put small key (String.make 5000 'x'));
  let file = Filename.concat dir "file" in
  close_out (open_out file);
  expect_error "store on a file" 3 (fun () -> Cckey.Store.open_ file);
  ignore (Sys.command (Printf.sprintf "rm -rf %s" (Filename.quote dir)))

(* close while another thread reads the store over and over (a 64 MiB
   entry: each get spends nearly all its time in the stub, the runtime lock
   released): close waits for the get in flight instead of raising, every
   get before it returned the whole entry, and the next one is refused.
   Whatever the interleaving, no call sees a freed handle. *)
let test_close_while_in_use () =
  let dir = temp_dir () in
  let s = Cckey.Store.open_ dir in
  let key = Cckey.make_key ~device:"d" ~name:"big" ~source:"s" () in
  let payload = String.make (64 lsl 20) 'p' in
  Cckey.Store.put s key payload;
  let served = Atomic.make 0 and wrong = Atomic.make 0 and stop = Atomic.make false in
  let rec worker () =
    if not (Atomic.get stop) then
      match Cckey.Store.get s key with
      | got ->
        if got <> Some payload then Atomic.incr wrong;
        Atomic.incr served;
        worker ()
      | exception Invalid_argument _ -> ()
  in
  let t = Thread.create worker () in
  while Atomic.get served = 0 do Thread.yield () done;
  let closed = match Cckey.Store.close s with () -> "closed" | exception Invalid_argument m -> m in
  Atomic.set stop true;   (* 6f74adb refused to close: the worker would read on *)
  Thread.join t;
  check ("close while a get is in flight: " ^ closed) (closed = "closed");
  check "every get before close returned its entry" (Atomic.get wrong = 0);
  let after = match Cckey.Store.get s key with _ -> "served" | exception Invalid_argument m -> m in
  check ("a get after close is refused: " ^ after) (closed <> "closed" || after = "Cckey.Store: the store is closed");
  ignore (Sys.command (Printf.sprintf "rm -rf %s" (Filename.quote dir)))

let test_errors () =
  (match Cckey.make_keys ~backend:`Cuda [| ("d", "n", "s", []) |] with
   | _ -> print_endline "skip: CUDA is available here; nothing to refuse"
   | exception Cckey.Error e ->
     check "unavailable backend: status 4" (e.status = 4);
     check "unavailable backend: strerror" (e.strerror = "backend unavailable");
     check "unavailable backend: detail from the library" (e.detail <> ""));
  check "threads < 0"
    (match Cckey.make_keys ~threads:(-1) [||] with _ -> false | exception Invalid_argument _ -> true);
  (* Passed on as a C unsigned, 2^32 + 2 ran as 2 threads. *)
  List.iter
    (fun threads ->
      check (Printf.sprintf "threads = %d is refused" threads)
        (match Cckey.make_keys ~threads [| ("d", "n", "s", []) |] with
         | _ -> false
         | exception Invalid_argument _ -> true))
    [ (1 lsl 32) + 2; 4097; max_int; min_int ];
  check "threads = 4096 runs" (Cckey.make_keys ~backend:`Cpu ~threads:4096 [| ("d", "n", "s", []) |] <> [||]);
  check "max_bytes < 0"
    (match Cckey.Store.open_ ~max_bytes:(-1) (temp_dir ()) with _ -> false | exception Invalid_argument _ -> true);
  check "version" (Cckey.version () <> "")

(* The store reads what `cckey warm` put there: SPIR-V compiled from a GLSL
   compute shader for lavapipe by bindings/warm_spirv.sh (run_tests.sh runs
   it), under the key this binding makes of the manifest's tuple, equal to
   what `cckey cache get` returned. *)
let read_file path =
  let ic = open_in_bin path in
  Fun.protect ~finally:(fun () -> close_in ic) (fun () -> really_input_string ic (in_channel_length ic))

let test_warmed_spirv () =
  match Sys.getenv_opt "CCKEY_TEST_SPIRV_DIR" with
  | None -> print_endline "SKIP warmed SPIR-V: run_tests.sh warms it (bindings/warm_spirv.sh)"
  | Some dir when not (Sys.file_exists (Filename.concat dir "expected.spv")) ->
      print_string ("SKIP warmed SPIR-V: " ^ read_file (Filename.concat dir "skipped"))
  | Some dir ->
      let file f = read_file (Filename.concat dir f) in
      let options =
        String.split_on_char '\n' (file "options.tsv")
        |> List.filter (( <> ) "")
        |> List.map (fun l -> match String.index_opt l '\t' with
             | Some i -> (String.sub l 0 i, String.sub l (i + 1) (String.length l - i - 1))
             | None -> failwith ("options.tsv: " ^ l))
      in
      let key = Cckey.make_key ~device:(file "device") ~name:"main" ~source:(file "double.comp") ~options () in
      let s = Cckey.Store.open_ (Filename.concat dir "store") in
      (match Cckey.Store.get s key with
       | None -> check "warmed SPIR-V found under the binding's key" false
       | Some spv ->
           let magic = if String.length spv >= 4 then Int32.to_int (String.get_int32_le spv 0) land 0xFFFFFFFF else 0 in
           check "warmed SPIR-V starts with the magic 0x07230203" (magic = 0x07230203);
           check "warmed SPIR-V is whole words" (String.length spv mod 4 = 0);
           check "warmed SPIR-V equals cckey cache get" (spv = file "expected.spv"));
      Cckey.Store.close s

(* The store reads entries that another process put only on a real Redis
   and a real nginx WebDAV named in the folder's cckey.conf
   (bindings/remote_fixture.py starts them and writes cases.tsv: FOLDER,
   KEY, PAYLOAD_FILE), keeps the hit in the folder, and with ~no_remote
   sees the folder alone. *)
let test_remote_layers () =
  match Sys.getenv_opt "CCKEY_TEST_REMOTE_DIR" with
  | None -> print_endline "SKIP remote layers: run_tests.sh starts the servers (bindings/remote_fixture.py)"
  | Some dir ->
      let cases =
        String.split_on_char '\n' (read_file (Filename.concat dir "cases.tsv")) |> List.filter (( <> ) "")
      in
      check "remote cases: redis and webdav" (List.length cases = 2);
      List.iter
        (fun line ->
          match String.split_on_char '\t' line with
          | [ folder; key; payload ] ->
              let want = Some (read_file payload) in
              let alone = Cckey.Store.open_ ~no_remote:true folder in
              check ("no_remote misses " ^ folder) (Cckey.Store.get alone key = None);
              let s = Cckey.Store.open_ folder in
              check ("cckey.conf's remote serves " ^ folder) (Cckey.Store.get s key = want);
              Cckey.Store.close s;
              check ("the hit was kept in " ^ folder) (Cckey.Store.get alone key = want);
              Cckey.Store.close alone
          | _ -> check ("cases.tsv line " ^ line) false)
        cases;
      let bad = Filename.concat dir "bad" in
      Unix.mkdir bad 0o755;
      let oc = open_out (Filename.concat bad "cckey.conf") in
      output_string oc "remote_only_read = maybe\n";
      close_out oc;
      expect_error "a bad cckey.conf line" 1 (fun () -> Cckey.Store.open_ bad)

let () =
  test_known ();
  test_random_make_key ();
  test_random_make_keys ();
  test_repeated_calls ();
  test_source_handles ();
  test_memo_is_weak ();
  test_threads_share_a_source ();
  test_batch_while_the_heap_moves ();
  test_keys_outlive_their_neighbours ();
  test_batch_with_a_compacting_gc ();
  test_store ();
  test_close_while_in_use ();
  test_errors ();
  test_warmed_spirv ();
  Dropin.run check;
  test_remote_layers ();
  if !failures > 0 then begin
    Printf.printf "%d check(s) failed\n" !failures;
    exit 1
  end;
  print_endline "all OCaml binding checks passed"
