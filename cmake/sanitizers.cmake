# Sanitizer builds: -DH5PACK_SANITIZE=address,undefined or -DH5PACK_SANITIZE=thread.
if(H5PACK_SANITIZE)
  set(_h5pack_san_flags -fsanitize=${H5PACK_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  # Quoted: a list inside a generator expression must stay one argument.
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:${_h5pack_san_flags}>")
  add_link_options(${_h5pack_san_flags})
  if(H5PACK_SANITIZE MATCHES "thread")
    # libgomp is not instrumented: its barriers look like races to TSan. Plain pthreads only.
    set(H5PACK_WITH_OPENMP OFF CACHE BOOL "" FORCE)
  endif()
endif()
