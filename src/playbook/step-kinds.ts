/** Which member makes a step which kind; the first one present wins. */
export const STEP_KINDS = ['uses', 'forEach', 'parallel', 'set', 'fail', 'wait'] as const;
export type StepKind = (typeof STEP_KINDS)[number];
