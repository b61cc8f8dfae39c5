(* Cckey as a drop-in for Sarek's key builder: a module with the signature
   of Sarek's Compile_cache.mli, used by a Sarek-shaped guarded cache (one
   mutex over the table; the build runs outside it; check, build, re-check,
   install) from several threads, each thread compiling a mix of shared and
   own kernels. Every key is checked against Oracle (Stdlib.Digest), and the
   cache against what it must hold: one value per distinct tuple, each the
   value built for that tuple. *)

(* Sarek's spoc/framework/Compile_cache.mli. *)
module type COMPILE_CACHE = sig
  val make_key : device:string -> name:string -> source:string -> ?options:(string * string) list -> unit -> string
end

module Cckey_cache : COMPILE_CACHE = Cckey

module Guarded = struct
  type 'v t = { mu : Mutex.t; table : (string, 'v) Hashtbl.t; mutable installed : int }

  let create () = { mu = Mutex.create (); table = Hashtbl.create 64; installed = 0 }

  let locked t f =
    Mutex.lock t.mu;
    Fun.protect ~finally:(fun () -> Mutex.unlock t.mu) f

  let find_or_build t ~key build =
    match locked t (fun () -> Hashtbl.find_opt t.table key) with
    | Some v -> v
    | None ->
        let built = build () in
        locked t (fun () ->
            match Hashtbl.find_opt t.table key with
            | Some winner -> winner
            | None ->
                Hashtbl.replace t.table key built;
                t.installed <- t.installed + 1;
                built)

  let length t = locked t (fun () -> Hashtbl.length t.table)
end

(* A backend's kernel cache over any COMPILE_CACHE, as Sarek's backends use
   theirs: the "binary" names what it was built from. *)
module Kernels (K : COMPILE_CACHE) = struct
  let cache = Guarded.create ()

  let compile ~device ~name ~source ~options =
    let key = K.make_key ~device ~name ~source ~options () in
    (key, Guarded.find_or_build cache ~key (fun () -> Thread.yield (); String.concat "|" [ device; name; source ]))
end

let run check =
  let module K = Kernels (Cckey_cache) in
  let shared = List.init 20 (fun i -> ("gpu0", Printf.sprintf "k%d" i, Printf.sprintf "src %d" (i mod 5), [ ("-O", "3") ])) in
  let own id = List.init 30 (fun i -> (Printf.sprintf "gpu%d" id, "own", Printf.sprintf "s%d" i, [ ("-D", string_of_int i) ])) in
  let wrong = Atomic.make 0 in
  let worker id () =
    for _ = 1 to 5 do
      List.iter
        (fun (device, name, source, options) ->
          let key, binary = K.compile ~device ~name ~source ~options in
          if key <> Oracle.make_key ~device ~name ~source ~options () || binary <> String.concat "|" [ device; name; source ]
          then Atomic.incr wrong)
        (shared @ own id)
    done
  in
  let threads = List.init 4 (fun id -> Thread.create (worker id) ()) in
  List.iter Thread.join threads;
  check (Printf.sprintf "drop-in under 4 threads: keys and binaries (%d wrong)" (Atomic.get wrong)) (Atomic.get wrong = 0);
  check "drop-in: one entry per distinct tuple" (Guarded.length K.cache = 20 + (4 * 30) && K.cache.installed = 140)
