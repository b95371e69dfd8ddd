package rendezvous

// MaxInstances bounds the instances of a run: instance 0 holds a
// connection to each of the others, and dividing the plan into n equal
// shares costs each instance of the order of n² steps (the shares' stripe
// pattern, runtime/executor/segment) before it starts: at 10,000 well under
// a second; at 10⁹ the plan alone took 2.3 GB.
const MaxInstances = 10_000
