# Included by llama.cpp's project() while setup.sh compiles llama-cpp-python (CMAKE_PROJECT_llama.cpp_INCLUDE).
# llama-cpp-python forces llama.cpp's "common" utilities on (argument parsing, chat templates, an HTTP client);
# its Python package never loads them, and they were half of the compile. A normal variable set here, in
# llama.cpp's own scope, shadows that forced cache entry, so neither the library nor its install rule is made.
set(LLAMA_BUILD_COMMON OFF)
