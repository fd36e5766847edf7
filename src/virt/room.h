/*
 * The runtime's growing arrays.
 */
#ifndef TDM_VIRT_ROOM_H
#define TDM_VIRT_ROOM_H

#include <stdlib.h>

/* 'items' (count used of *cap, each 'size' bytes) with room for one
   more, doubled from 'first' items when full; NULL without memory, the
   items left as they were. */
static inline void *tdm_virt_room(void *items, int count, int *cap, size_t size, int first)
{
    if (count < *cap)
        return items;
    int more = *cap ? 2 * *cap : first;
    void *grown = realloc(items, size * (size_t)more);
    if (grown)
        *cap = more;
    return grown;
}

#endif
