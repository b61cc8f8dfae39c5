(* Finds the cckey C library for the stubs and writes the flags dune reads:
   c_flags.sexp (the folder of cckey.h) and c_library_flags.sexp (libcckey.a
   and what it needs). The static library is linked so that programs do not
   depend on where the CMake build folder was.

   First match wins:
   1. CCKEY_BUILD_DIR: a CMake build folder of cckey; the header comes from
      the source folder recorded in its CMakeCache.txt;
   2. CCKEY_PREFIX: an installed cckey (PREFIX/include, PREFIX/lib*/);
   3. by default, the package's own copy of the C sources (../cckey-src:
      links to the repository's files, which dune copies into _build),
      built here by the library's own CMake build (library only), so a
      plain `dune build` or `opam install` needs no prior build. The
      optional parts (OpenCL, Redis, HTTP, libcrypto) are found as that
      build finds them, and left out where missing; what they need is
      linked as the system's shared libraries. *)

let file_exists p = Sys.file_exists p && not (Sys.is_directory p)

let fail fmt =
  Printf.ksprintf (fun s -> prerr_endline ("cckey discover: " ^ s); exit 1) fmt

(* The source folder a CMake build was configured from, if recorded. *)
let source_dir_of build =
  let cache = Filename.concat build "CMakeCache.txt" in
  if not (file_exists cache) then None
  else begin
    let ic = open_in cache in
    let prefix = "cckey_SOURCE_DIR:STATIC=" in
    let n = String.length prefix in
    let rec loop () =
      match input_line ic with
      | line when String.length line > n && String.sub line 0 n = prefix ->
        Some (String.sub line n (String.length line - n))
      | _ -> loop ()
      | exception End_of_file -> None
    in
    let r = loop () in
    close_in ic;
    r
  end

let read_lines file =
  let ic = open_in file in
  let rec loop acc =
    match input_line ic with
    | line -> loop (if String.trim line = "" then acc else String.trim line :: acc)
    | exception End_of_file -> List.rev acc
  in
  let lines = loop [] in
  close_in ic;
  lines

let absolute p = if Filename.is_relative p then Filename.concat (Sys.getcwd ()) p else p

let from_build build =
  let build = absolute build in
  let lib = Filename.concat build "libcckey.a" in
  if not (file_exists lib) then
    fail "%s not found: build the library first (cmake --build %s --target cckey_static)" lib build;
  let src = match source_dir_of build with Some s -> s | None -> Filename.dirname build in
  let incdir = Filename.concat src "include" in
  if not (file_exists (Filename.concat incdir "cckey.h")) then fail "cckey.h not found in %s" incdir;
  let deps = Filename.concat build "cckey-static-deps.txt" in
  if not (file_exists deps) then fail "%s not found: reconfigure %s with this version's CMakeLists.txt" deps build;
  (incdir, lib, read_lines deps)

let from_prefix prefix =
  let prefix = absolute prefix in
  let candidates = [ "lib"; "lib64"; "lib/x86_64-linux-gnu"; "lib/aarch64-linux-gnu" ] in
  match
    List.find_opt (fun d -> file_exists (Filename.concat (Filename.concat prefix d) "libcckey.a")) candidates
  with
  | Some d ->
    let libdir = Filename.concat prefix d in
    let out = Filename.temp_file "cckey" ".libs" in
    let cmd =
      Printf.sprintf "PKG_CONFIG_PATH=%s pkg-config --static --libs cckey > %s"
        (Filename.quote (Filename.concat libdir "pkgconfig")) (Filename.quote out)
    in
    if Sys.command cmd <> 0 then fail "pkg-config --static --libs cckey failed for %s" prefix;
    let flags = String.concat " " (read_lines out) |> String.split_on_char ' ' in
    Sys.remove out;
    let dep f = f <> "" && f <> "-lcckey" && not (String.length f > 2 && String.sub f 0 2 = "-L") in
    (Filename.concat prefix "include", Filename.concat libdir "libcckey.a", List.filter dep flags)
  | None -> fail "no libcckey.a under %s/lib*" prefix

(* Runs a command; its output goes to LOG, shown when it fails. *)
let run_logged log cmd =
  if Sys.command (Printf.sprintf "%s >>%s 2>&1" cmd (Filename.quote log)) <> 0 then begin
    (try
       let ic = open_in log in
       (try
          while true do
            prerr_endline (input_line ic)
          done
        with End_of_file -> ());
       close_in ic
     with Sys_error _ -> ());
    fail "%s failed (its output is above)" cmd
  end

let build_own_copy () =
  let src = absolute "../cckey-src" in
  if not (file_exists (Filename.concat src "CMakeLists.txt")) then
    fail "no C sources in %s: set CCKEY_BUILD_DIR or CCKEY_PREFIX" src;
  let build = absolute "cckey-cmake" in
  let log = absolute "cckey-cmake.log" in
  if Sys.file_exists log then Sys.remove log;
  let q = Filename.quote in
  if not (file_exists (Filename.concat build "CMakeCache.txt")) then
    run_logged log
      (Printf.sprintf
         "cmake -S %s -B %s -DCMAKE_BUILD_TYPE=Release -DCCKEY_BUILD_CLI=OFF -DCCKEY_BUILD_TESTS=OFF \
          -DCCKEY_BUILD_BENCH=OFF"
         (q src) (q build));
  let jobs = match Sys.getenv_opt "DUNE_JOBS" with Some j -> j | None -> "2" in
  run_logged log
    (Printf.sprintf "cmake --build %s --target cckey_static cckey_shared -j %s" (q build) (q jobs));
  from_build build

let env name = match Sys.getenv_opt name with Some "" | None -> None | Some v -> Some v

let () =
  let incdir, lib, deps =
    match env "CCKEY_BUILD_DIR", env "CCKEY_PREFIX" with
    | Some b, _ -> from_build b
    | None, Some p -> from_prefix p
    | None, None -> build_own_copy ()
  in
  let write file contents =
    let oc = open_out file in
    output_string oc contents;
    close_out oc
  in
  write "c_flags.sexp" (Printf.sprintf "(-I %S)\n" incdir);
  (* The library goes into the package as its foreign archive (libcckey.a,
     and dllcckey.so for bytecode), so an installed cckey does not point
     back into this build. *)
  let copy from dst =
    if Sys.command (Printf.sprintf "cp -fL %s %s" (Filename.quote from) (Filename.quote dst)) <> 0 then
      fail "cannot copy %s" from
  in
  copy lib "libcckey.a";
  copy (Filename.concat (Filename.dirname lib) "libcckey.so") "dllcckey.so";
  let quoted = List.map (Printf.sprintf "%S") (deps @ [ "-lpthread"; "-ldl" ]) in
  write "c_library_flags.sexp" ("(" ^ String.concat " " quoted ^ ")\n")
