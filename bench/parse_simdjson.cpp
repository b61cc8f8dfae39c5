// The simdjson side of bench/parse.c: On-Demand iterate_many over a buffer
// of JSON Lines, walking every field of every document (strings decoded),
// with a C interface so the rest of the bench stays C.
#include "parse_walk.h"

#include <simdjson.h>

#include <cstring>
#include <string>

#define CCKEY_SJ_STR2(x) #x
#define CCKEY_SJ_STR(x) CCKEY_SJ_STR2(x)

using namespace simdjson;

namespace {

// Strings count at any depth; member names only below the top level (the
// option objects), which is what our parser hands out too.
error_code walk(ondemand::value v, int depth, parse_walk_sum *s)
{
    ondemand::json_type t;
    auto e = v.type().get(t);
    if (e) return e;
    switch (t) {
    case ondemand::json_type::object: {
        ondemand::object o;
        if ((e = v.get_object().get(o))) return e;
        for (auto field : o) {
            std::string_view k;
            if ((e = field.unescaped_key().get(k))) return e;
            if (depth > 0) parse_walk_add(s, k.data(), k.size());
            ondemand::value fv;
            if ((e = field.value().get(fv))) return e;
            if ((e = walk(fv, depth + 1, s))) return e;
        }
        return SUCCESS;
    }
    case ondemand::json_type::array: {
        ondemand::array a;
        if ((e = v.get_array().get(a))) return e;
        for (auto el : a) {
            ondemand::value ev;
            if ((e = el.get(ev))) return e;
            if ((e = walk(ev, depth + 1, s))) return e;
        }
        return SUCCESS;
    }
    case ondemand::json_type::string: {
        std::string_view str;
        if ((e = v.get_string().get(str))) return e;
        parse_walk_add(s, str.data(), str.size());
        return SUCCESS;
    }
    case ondemand::json_type::number: {
        double d;
        return v.get_double().get(d);
    }
    case ondemand::json_type::boolean: {
        bool b;
        return v.get_bool().get(b);
    }
    case ondemand::json_type::null:
        return v.is_null().error();
    }
    return INCORRECT_TYPE;
}

}  // namespace

struct parse_sj {
    ondemand::parser parser;
    padded_string text;
};

extern "C" parse_sj *parse_sj_new(const char *buf, size_t len, int threaded)
{
    parse_sj *p = new (std::nothrow) parse_sj;
    if (!p) return nullptr;
    p->text = padded_string(buf, len);
#ifdef SIMDJSON_THREADS_ENABLED
    p->parser.threaded = threaded != 0;
#else
    (void)threaded;
#endif
    return p;
}

extern "C" const char *parse_sj_impl(void)
{
    static std::string what = std::string(CCKEY_SJ_STR(SIMDJSON_VERSION)) + ", kernel " +
                              simdjson::get_active_implementation()->name();
    return what.c_str();
}

extern "C" void parse_sj_free(parse_sj *p) { delete p; }

extern "C" int parse_sj_walk(parse_sj *p, size_t batch_size, parse_walk_sum *s, char *err, size_t err_len)
{
    ondemand::document_stream docs;
    auto e = p->parser.iterate_many(p->text, batch_size).get(docs);
    for (auto it = docs.begin(); !e && it != docs.end(); ++it) {
        ondemand::document_reference doc;
        if ((e = (*it).get(doc))) break;
        ondemand::value root;
        if ((e = doc.get_value().get(root))) break;
        if ((e = walk(root, 0, s))) break;
        s->lines++;
    }
    if (e) {
        std::snprintf(err, err_len, "simdjson: %s", error_message(e));
        return -1;
    }
    return 0;
}
