#!/usr/bin/env bash
# Installs a CMake build into a scratch prefix, then uses ydbview-gtk from
# it the two ways a C user would: a program built with `pkg-config --cflags
# --libs ydbview-gtk`, and a CMake project with find_package(ydbview-gtk
# CONFIG REQUIRED) and ydbview::gtk. Both run with no LD_LIBRARY_PATH. The
# GIR and the typelib must be installed where introspection looks.
#
#   bash bindings/gtk/tests/check-install.sh build-dir [c-compiler [generator]]
set -euo pipefail
build=$1
cc=${2:-cc}
generator=${3:-Ninja}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libydbview-gtk.so' | head -1)")
for file in "$prefix/include/ydbview-gtk.h" "$prefix/share/gir-1.0/YdbviewGtk-1.0.gir" \
            "$libdir/girepository-1.0/YdbviewGtk-1.0.typelib" "$libdir/pkgconfig/ydbview-gtk.pc" \
            "$libdir/cmake/ydbview-gtk/ydbview-gtkConfig.cmake"; do
  [ -f "$file" ] || { echo "not installed: ${file#$prefix/}"; exit 1; }
done

cat >"$work/main.c" <<'C'
#include <stdio.h>
#include "ydbview-gtk.h"
int main(void) {
    GError *error = NULL;
    ydb_database *db = NULL;
    const char *groups[] = {"a"};
    ydb_mappings *m = NULL;
    ydb_database_open(NULL, &db);
    ydb_mappings_new("no view", groups, 1, &m);
    /* No view is registered: the model says so in a GError. */
    if (ydbview_gtk_list_model_new(db, m, &error) != NULL || error == NULL) return 1;
    printf("ydbview-gtk %s from the prefix: %s\n", YDBVIEW_GTK_VERSION, error->message);
    g_error_free(error);
    ydb_database_close(db);
    return 0;
}
C
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
"$cc" -o "$work/pc-app" "$work/main.c" $(pkg-config --cflags --libs ydbview-gtk)
env -u LD_LIBRARY_PATH "$work/pc-app"

mkdir "$work/consumer"
cp "$work/main.c" "$work/consumer/main.c"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(gtk_consumer LANGUAGES C)
find_package(ydbview-gtk CONFIG REQUIRED)
add_executable(app main.c)
target_link_libraries(app PRIVATE ydbview::gtk)
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.txt" 2>&1 || { cat "$work/configure.txt"; exit 1; }
cmake --build "$work/consumer/build" >"$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
env -u LD_LIBRARY_PATH "$work/consumer/build/app"
echo "installed to a scratch prefix; built with pkg-config and with find_package(ydbview-gtk), both ran"
