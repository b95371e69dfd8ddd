// pace.js: the pacing load of bench/e2eload -rates. An open model: RATE
// iterations a second for DURATION, each streaming one chat answer of
// exactly TOKENS tokens (stream.js's iteration); a second of arrivals'
// VUs initialised before the start and twice that at most.
export { default } from './stream.js';

const rate = Number(__ENV.RATE || 1000);

export const options = {
  scenarios: {
    open: {
      executor: 'constant-arrival-rate',
      rate: rate,
      duration: __ENV.DURATION || '6s',
      preAllocatedVUs: rate,
      maxVUs: 2 * rate,
    },
  },
};
