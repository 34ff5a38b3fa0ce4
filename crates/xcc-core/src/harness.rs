//! Two endpoints and a link algorithm on a virtual clock, with no simulator. (In progress.)
