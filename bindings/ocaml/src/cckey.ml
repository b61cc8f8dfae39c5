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

(* make_key's memo: one handle per physical source string. The ephemeron
   keeps the handle exactly as long as the string lives; the handle's
   custom block frees the C side when collected. Strings are compared with
   (==), and hashed on their length and a few sampled bytes, so a look-up
   costs the same for a 4 KiB source as for a short one. *)
module Physical = struct
  type t = string

  let equal = ( == )

  let hash (s : string) =
    let n = String.length s in
    if n = 0 then 0
    else begin
      let h = ref n in
      for i = 0 to 7 do
        h := (!h * 31) + Char.code (String.unsafe_get s (i * (n - 1) / 7))
      done;
      !h land max_int
    end
end

module Memo = Ephemeron.K1.Make (Physical)

let memo : Source.t Memo.t = Memo.create 64

(* OCaml threads switch at allocations, which a table operation makes. *)
let memo_lock = Mutex.create ()

let find_handle source =
  Mutex.lock memo_lock;
  let h = Memo.find_opt memo source in
  Mutex.unlock memo_lock;
  h

let handle_of source =
  match find_handle source with
  | Some h -> h
  | None ->
    (* Digest outside the lock (a long source releases the runtime lock);
       if another thread added the string meanwhile, keep its handle. *)
    let h = Source.create source in
    Mutex.lock memo_lock;
    let h =
      match Memo.find_opt memo source with
      | Some other -> other
      | None ->
        Memo.replace memo source h;
        h
    in
    Mutex.unlock memo_lock;
    h

let make_key ~device ~name ~source ?(options = []) () =
  Source.key_raw (handle_of source) device name options

type backend = [ `Auto | `Cpu | `Opencl | `Cuda ]
type verify = [ `None | `All | `Sample ]

(* The values of cckey_backend_kind and cckey_verify_mode in cckey.h. *)
let backend_code = function `Auto -> 0 | `Cpu -> 1 | `Opencl -> 2 | `Cuda -> 3
let verify_code = function `None -> 0 | `All -> 1 | `Sample -> 2

external make_keys_raw :
  int -> int -> int -> (string * string * string * (string * string) list) array -> string array * string * string
  = "cckey_ml_make_keys"

let make_keys_info ?(backend = `Auto) ?(threads = 0) ?(verify = `None) tuples =
  if threads < 0 then invalid_arg "Cckey.make_keys: threads < 0";
  make_keys_raw (backend_code backend) threads (verify_code verify) tuples

let make_keys ?backend ?threads ?verify tuples =
  let keys, _, _ = make_keys_info ?backend ?threads ?verify tuples in
  keys

module Store = struct
  type t

  type stats = { entries : int; bytes : int; max_bytes : int; temp_files : int; temp_bytes : int }

  external open_raw : string -> int -> t = "cckey_ml_store_open"
  external get : t -> string -> string option = "cckey_ml_store_get"
  external put : t -> string -> string -> unit = "cckey_ml_store_put"
  external stats_raw : t -> int * int * int * int * int = "cckey_ml_store_stats"
  external close : t -> unit = "cckey_ml_store_close"

  let open_ ?(max_bytes = 0) dir = open_raw dir max_bytes

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
