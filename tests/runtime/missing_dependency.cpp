// A library that one fault plugin links against and that the dynamic loader
// is never told about, so that loading that plugin fails with the loader's
// own "cannot open shared object file" message.
int accel_test_missing_dependency() { return 0; }
