type error = { status : int; strerror : string; detail : string }

exception Error of error

let () = Callback.register_exception "Cckey.Error" (Error { status = 0; strerror = ""; detail = "" })

let () =
  Printexc.register_printer (function
    | Error { strerror; detail = ""; _ } -> Some ("Cckey.Error: " ^ strerror)
    | Error { strerror; detail; _ } -> Some (Printf.sprintf "Cckey.Error: %s: %s" strerror detail)
    | _ -> None)

module Source = struct
  type t

  external create : string -> t = "cckey_ml_source_new"

  external key_raw : t -> string -> string -> (string * string) list -> string = "cckey_ml_source_key"

  external digest : t -> string = "cckey_ml_source_digest"

  let key t ~device ~name ?(options = []) () = key_raw t device name options
end

(* make_key's memo: one entry per physical source string. The ephemeron
   keeps the entry exactly as long as the string lives; the handle's custom
   block frees the C side when collected. Strings are compared with (==) and
   hashed on their whole content (a sampled hash would put every generated
   source of one length in one bucket). In front of the table, a few
   recently used strings are found by (==) alone, without hashing: the usual
   caller keys many kernels of one source in a row. *)
module Physical = struct
  type t = string

  let equal = ( == )
  let hash (s : string) = Hashtbl.hash s
end

module Memo = Ephemeron.K1.Make (Physical)

(* The last key made from a source, so that asking again (the usual memo
   hit: a backend looking up the kernel it just compiled) costs a few string
   compares and no C call or allocation. Keys are immutable strings, so the
   same one is returned again. *)
type last = { l_device : string; l_name : string; l_options : (string * string) list; l_key : string }

(* [last] is written whole and read without a lock: a reader sees the old
   record or the new one, each consistent. *)
type entry = { handle : Source.t; mutable last : last option }

let memo : entry Memo.t = Memo.create 64

(* OCaml threads switch at allocations, which a table operation makes. *)
let memo_lock = Mutex.create ()

(* Written under memo_lock, one whole ephemeron at a time; read without it,
   since a reader sees either the old ephemeron or the new one. *)
let recent : (string, entry) Ephemeron.K1.t array = Array.init 4 (fun _ -> Ephemeron.K1.create ())
let recent_next = ref 0

let rec find_recent source i =
  if i = Array.length recent then None
  else
    let e = Array.unsafe_get recent i in
    match Ephemeron.K1.get_key e with
    | Some k when k == source -> Ephemeron.K1.get_data e
    | _ -> find_recent source (i + 1)

let remember source h =
  let e = Ephemeron.K1.create () in
  Ephemeron.K1.set_key e source;
  Ephemeron.K1.set_data e h;
  recent.(!recent_next) <- e;
  recent_next := (!recent_next + 1) land (Array.length recent - 1)

let entry_of source =
  match find_recent source 0 with
  | Some h -> h
  | None -> (
    Mutex.lock memo_lock;
    let found = Memo.find_opt memo source in
    Option.iter (remember source) found;
    Mutex.unlock memo_lock;
    match found with
    | Some h -> h
    | None ->
      (* Digest outside the lock (a long source releases the runtime lock);
         if another thread added the string meanwhile, keep its entry. *)
      let h = { handle = Source.create source; last = None } in
      Mutex.lock memo_lock;
      let h =
        match Memo.find_opt memo source with
        | Some other -> other
        | None ->
          Memo.replace memo source h;
          h
      in
      remember source h;
      Mutex.unlock memo_lock;
      h)

let rec same_options a b =
  a == b
  ||
  match (a, b) with
  | (k, v) :: a', (k', v') :: b' -> String.equal k k' && String.equal v v' && same_options a' b'
  | _ -> false

let make_key ~device ~name ~source ?(options = []) () =
  let e = entry_of source in
  match e.last with
  | Some l when String.equal l.l_device device && String.equal l.l_name name && same_options l.l_options options ->
    l.l_key
  | _ ->
    let key = Source.key_raw e.handle device name options in
    e.last <- Some { l_device = device; l_name = name; l_options = options; l_key = key };
    key

type backend = [ `Auto | `Cpu | `Opencl | `Cuda ]
type verify = [ `None | `All | `Sample ]

(* The values of cckey_backend_kind and cckey_verify_mode in cckey.h. *)
let backend_code = function `Auto -> 0 | `Cpu -> 1 | `Opencl -> 2 | `Cuda -> 3
let verify_code = function `None -> 0 | `All -> 1 | `Sample -> 2

external make_keys_raw :
  int -> int -> int -> (string * string * string * (string * string) list) array -> string array * string * string
  = "cckey_ml_make_keys"

let make_keys_info ?(backend = `Auto) ?(threads = 0) ?(verify = `None) tuples =
  (* The stub passes threads on as a C unsigned: 2^32 + 2 would be 2. *)
  if threads < 0 || threads > 4096 then invalid_arg "Cckey.make_keys: threads must be from 0 (one per core) to 4096";
  make_keys_raw (backend_code backend) threads (verify_code verify) tuples

let make_keys ?backend ?threads ?verify tuples =
  let keys, _, _ = make_keys_info ?backend ?threads ?verify tuples in
  keys

module Store = struct
  type t

  type stats = { entries : int; bytes : int; max_bytes : int; temp_files : int; temp_bytes : int }

  external open_raw : string -> int -> string array option * bool * string option * bool -> t
    = "cckey_ml_store_open"
  external get : t -> string -> string option = "cckey_ml_store_get"
  external put : t -> string -> string -> unit = "cckey_ml_store_put"
  external stats_raw : t -> int * int * int * int * int = "cckey_ml_store_stats"
  external close : t -> unit = "cckey_ml_store_close"

  let open_ ?(max_bytes = 0) ?remotes ?(read_only = false) ?sign_key ?(no_remote = false) dir =
    open_raw dir max_bytes (Option.map Array.of_list remotes, read_only, sign_key, no_remote)

  let stats t =
    let entries, bytes, max_bytes, temp_files, temp_bytes = stats_raw t in
    { entries; bytes; max_bytes; temp_files; temp_bytes }
end

external version : unit -> string = "cckey_ml_version"

module Debug = struct
  external live_sources : unit -> int = "cckey_ml_live_sources"

  let memo_entries () =
    Mutex.lock memo_lock;
    let n = Memo.length memo in
    Mutex.unlock memo_lock;
    n
end
