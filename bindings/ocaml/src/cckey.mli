(** Standardized compile-cache keys for GPU kernels: the cckey C library for
    OCaml.

    A key is [hex(md5 device) ^ ":" ^ hex(md5 name) ^ ":" ^ hex(md5 source) ^ ":"
    ^ hex(md5 (canon options))], 131 characters, where [canon] sorts the
    option pairs stably by key (bytes compared unsigned, a proper prefix
    first), writes each as [hex(md5 k) ^ "=" ^ hex(md5 v)] and joins them with
    [","]. Every field is arbitrary bytes. The result is byte-identical to
    [Spoc_framework.Compile_cache.make_key] in Sarek, which {!make_key} can
    replace. *)

type error = {
  status : int;  (** the [cckey_status] code *)
  strerror : string;  (** [cckey_strerror status] *)
  detail : string;  (** [cckey_last_error ()] at the time of the failure; may be [""] *)
}

exception Error of error
(** Raised when a library call fails. *)

val make_key :
  device:string -> name:string -> source:string -> ?options:(string * string) list -> unit -> string
(** The key of one kernel. Memoised per physical [source] string, weakly: the
    first call with a string digests it once into a handle kept in an
    ephemeron table keyed on that string, and the handle is freed when the
    string is collected; later calls with the same string and the same
    (device, name, options) compute no MD5 (the last such key of each source
    is kept on the OCaml side and returned again). Safe from several threads; a
    source of 64 KiB or more is digested with the runtime lock released. *)

type backend = [ `Auto | `Cpu | `Opencl | `Cuda ]
type verify = [ `None | `All | `Sample ]

val make_keys :
  ?backend:backend ->
  ?threads:int ->
  ?verify:verify ->
  (string * string * string * (string * string) list) array ->
  string array
(** The keys of many (device, name, source, options) tuples, in order. Each
    distinct field value is digested once across the batch, on [threads]
    workers (default [0]: one per core) and, with [`Auto] (the default), on a
    GPU where that is faster. The runtime lock is released while the keys
    are computed (the fields are copied first; a long string shared by many
    tuples is copied once). An explicitly chosen backend that cannot run here
    raises {!Error}; a device that fails in mid-batch is not an error (the
    rest runs on the CPU). [verify] recomputes device digests on the CPU.
    @raise Invalid_argument if [threads] is negative or more than 4096 (the
    library's limit). *)

val make_keys_info :
  ?backend:backend ->
  ?threads:int ->
  ?verify:verify ->
  (string * string * string * (string * string) list) array ->
  string array * string * string
(** As {!make_keys}, also returning the backend that ran (["cpu"],
    ["opencl"], ["cpu+cuda"], ...) and the batch's warning (or [""]), e.g. a
    device that failed and left the rest to the CPU. *)

(** A source handle: the source digested once, with a memo of its keys. *)
module Source : sig
  type t

  val create : string -> t
  (** Digest a source (copied; with the runtime lock released when it is
      64 KiB or more). *)

  val key : t -> device:string -> name:string -> ?options:(string * string) list -> unit -> string
  (** As {!make_key} for this source; memoised per (device, name, options). *)

  val digest : t -> string
  (** The hex MD5 of the source (32 characters). *)
end

(** The on-disk store of compiled kernels, addressed by key. Entries are
    written atomically and durably and checked on every read. Safe to share
    between threads and processes; disk work runs with the runtime lock
    released. *)
module Store : sig
  type t

  type stats = {
    entries : int;
    bytes : int;  (** total size of the entry files *)
    max_bytes : int;  (** this handle's limit; 0 for none ([max_int] for a larger one) *)
    temp_files : int;  (** unfinished writes *)
    temp_bytes : int;
  }

  val open_ :
    ?max_bytes:int -> ?remotes:string list -> ?read_only:bool -> ?sign_key:string -> ?no_remote:bool -> string -> t
  (** Open (creating it, with parents) the store in a folder, with the remote
      caches under it that the [cckey] command would use for this folder:
      the [remote = URL] lines of its [cckey.conf], with [remote_only_read],
      [remote_key_file] and [remote_max_entry] (read by the library, as the
      command reads them). {!get} asks the folder, then each remote in
      order, and keeps a remote's hit in the folder; {!put} writes the folder
      and every remote that is not read-only. A remote never makes a call
      fail: one that cannot be reached, or serves an entry that fails its
      checks or its signature, is a miss (said on stderr).
      [max_bytes] (default 0: the folder's own limit, [max_size] in its
      [cckey.conf], else none) limits the folder's size; least recently used
      entries go first. [remotes]: URLs in place of [cckey.conf]'s remote
      lines (its key file and entry cap still apply). [read_only]: nothing
      is written, in the folder or on a remote ({!put} raises [Error]).
      [sign_key]: the remotes' signing secret, in place of
      [remote_key_file]. [no_remote]: the folder alone. Closed by the GC, or
      by {!close}.
      @raise Error for a bad [cckey.conf] line or URL (status 1; the detail
      names the file and line, never a value) or a folder that cannot be
      used (status 3).
      @raise Invalid_argument if [max_bytes] is negative, [sign_key] is
      empty, or the path or a URL holds a NUL byte. *)

  val get : t -> string -> string option
  (** The payload stored under a key, or [None]. An entry that fails its
      checks is removed and is a miss. *)

  val put : t -> string -> string -> unit
  (** [put t key data] stores [data] under [key], replacing any entry.
      @raise Error for a malformed key or an entry larger than [max_bytes]. *)

  val stats : t -> stats

  val close : t -> unit
  (** Close now: calls that other threads have in flight on [t] finish first
      (close waits for them, with the runtime lock released), and calls
      after it raise [Invalid_argument]. Idempotent. *)
end

val version : unit -> string
(** The version of the linked cckey library. *)

(** Introspection for tests and monitoring. *)
module Debug : sig
  val live_sources : unit -> int
  (** Source handles alive in the process: {!make_key}'s memo entries plus
      {!Source.t} values not yet collected. *)

  val memo_entries : unit -> int
  (** Entries in {!make_key}'s table, dead strings included until the table
      next cleans them out. *)
end
