(* Finds the cckey C library for the stubs and writes the flags dune reads:
   c_flags.sexp (the folder of cckey.h) and c_library_flags.sexp (libcckey.a
   and what it needs). The static library is linked so that programs do not
   depend on where the CMake build folder was.

   First match wins:
   1. CCKEY_BUILD_DIR: a CMake build folder of cckey; the header comes from
      the source folder recorded in its CMakeCache.txt;
   2. CCKEY_PREFIX: an installed cckey (PREFIX/include, PREFIX/lib*/);
   3. the repository this binding sits in (build/ next to include/), found by
      walking up from the current folder (dune runs this inside _build). *)

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

let rec find_repo dir =
  if file_exists (Filename.concat dir "include/cckey.h") && file_exists (Filename.concat dir "build/libcckey.a")
  then Some (Filename.concat dir "build")
  else
    let parent = Filename.dirname dir in
    if parent = dir then None else find_repo parent

let env name = match Sys.getenv_opt name with Some "" | None -> None | Some v -> Some v

let () =
  let incdir, lib, deps =
    match env "CCKEY_BUILD_DIR", env "CCKEY_PREFIX" with
    | Some b, _ -> from_build b
    | None, Some p -> from_prefix p
    | None, None -> (
      match find_repo (Sys.getcwd ()) with
      | Some b -> from_build b
      | None ->
        fail "no cckey library found: build it with CMake, or set CCKEY_BUILD_DIR or CCKEY_PREFIX")
  in
  let write file contents =
    let oc = open_out file in
    output_string oc contents;
    close_out oc
  in
  write "c_flags.sexp" (Printf.sprintf "(-I %S)\n" incdir);
  let quoted = List.map (Printf.sprintf "%S") (lib :: deps @ [ "-lpthread"; "-ldl" ]) in
  write "c_library_flags.sexp" ("(" ^ String.concat " " quoted ^ ")\n")
