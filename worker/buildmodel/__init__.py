"""The build system's own model of a project (CMake's File API), read into typed data, and the checks
made from it: which sources each target compiles in which language, and what a build must leave behind."""
