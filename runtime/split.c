/* The column split over a call's threads (dispatch.h), on its own so that the lab's trace of
 * the driver (measure/replay/driver_replay.c) runs it with plan_call.c. */
#include "dispatch.h"
#include "threads.h"

size_t gr_split_columns(size_t n, size_t panel_width, size_t want, size_t *piece_cols)
{
    size_t panels = n / panel_width + (n % panel_width != 0);
    size_t pieces = want ? want : (size_t)gr_threads_get();
    if (pieces > panels)
        pieces = panels;
    size_t per_piece = panels / pieces + (panels % pieces != 0);
    *piece_cols = per_piece * panel_width;
    return panels / per_piece + (panels % per_piece != 0);
}
