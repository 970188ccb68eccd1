/** Preloaded (`node --import`): writes this process's peak RSS to stderr as it exits, as `peakRssMb=<MB>`. */
import { peakRssMb } from './peak-rss.mjs';

process.on('exit', () => process.stderr.write(`peakRssMb=${peakRssMb()}`));
