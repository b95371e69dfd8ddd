package health

// waitEffect is what goroutines waiting for a CPU did to the measurement.
// On Linux token times are the kernel's receive times (modules/llm), which
// leave out a wait to read what arrived; requests and iterations still
// start late by it.
const waitEffect = "requests and iterations started late by that wait (token times are the kernel's receive times, which leave it out)"
