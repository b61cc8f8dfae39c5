(* The key recipe written from its specification on Stdlib.Digest: the
   independent oracle the binding is checked against. *)

let hex s = Digest.to_hex (Digest.string s)

(* Stable sort by key; OCaml's string order is bytewise unsigned with a
   proper prefix first, as the recipe says. *)
let canon options =
  List.stable_sort (fun (a, _) (b, _) -> String.compare a b) options
  |> List.map (fun (k, v) -> hex k ^ "=" ^ hex v)
  |> String.concat ","

let make_key ~device ~name ~source ?(options = []) () =
  String.concat ":" [ hex device; hex name; hex source; hex (canon options) ]
