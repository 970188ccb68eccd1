/** Locating devices: synchronously, by report, and the devices excluded from location. */
import { MAX_REPORT_DEVICES } from '../limits.js';
import { L } from './load-schemas.js';
import { normalizeLocation } from './normalize.js';
import type { Operation } from './operation.js';

export const LOCATION = {
  'location.setExclusions': {
    action: 'location.setExclusions',
    summary: 'Append to or replace the devices excluded from location.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/consents',
    get input() {
      return L().SetExclusionsRequest;
    },
    get output() {
      return L().SetExclusionsResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
    devicesIn: 'exclusion',
  },
  'location.getExclusions': {
    action: 'location.getExclusions',
    summary: 'Read the exclusion list (every page).',
    area: 'loc',
    method: 'GET',
    path: '/loc/v1/consents/{accountName}/index/{startIndex}',
    get input() {
      return L().GetExclusionsRequest;
    },
    get output() {
      return L().GetExclusionsResult;
    },
    get page() {
      return L().ExclusionsPage;
    },
    paging: 'startIndex',
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'location.locate': {
    action: 'location.locate',
    summary: 'Locate devices synchronously.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/locations',
    get input() {
      return L().LocateRequest;
    },
    get output() {
      return L().LocateResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
    deviceErrors: true,
    normalize: normalizeLocation,
    strategy: 'locate',
    needsDevices: 'deviceList',
  },
  'location.createReport': {
    action: 'location.createReport',
    summary:
      'Request an asynchronous location report; more than 10,000 devices are sent in several requests.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/locationreports',
    get input() {
      return L().CreateReportInput;
    },
    get request() {
      return L().CreateReportRequest;
    },
    get output() {
      return L().CreateReportResult;
    },
    // A report is a billable resource: dry-run does not create one, and an unknown outcome is not re-sent.
    mutating: true,
    onlyReadsDevices: true,
    retrySafe: false,
    errorShape: 'errorCode',
    deviceErrors: true,
    normalize: normalizeLocation,
    strategy: 'locationReport',
    needsDevices: 'deviceList',
    batchSize: MAX_REPORT_DEVICES,
  },
  'location.getReportStatus': {
    action: 'location.getReportStatus',
    summary: 'Status of a location report: QUEUED, INPROGRESS or COMPLETED.',
    area: 'loc',
    method: 'GET',
    path: '/loc/v1/locationreports/{accountName}/report/{txid}/status',
    get input() {
      return L().ReportRefRequest;
    },
    get output() {
      return L().ReportStatusResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'location.getReport': {
    action: 'location.getReport',
    summary: 'Per-device results of a location report (every page).',
    area: 'loc',
    method: 'GET',
    path: '/loc/v1/locationreports/{accountName}/report/{txid}/index/{startIndex}',
    get input() {
      return L().GetReportRequest;
    },
    get output() {
      return L().GetReportResult;
    },
    get page() {
      return L().ReportPage;
    },
    paging: 'startIndex',
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
    deviceErrors: true,
  },
  'location.cancelReport': {
    action: 'location.cancelReport',
    summary: 'Cancel a location report that has not completed.',
    area: 'loc',
    method: 'DELETE',
    path: '/loc/v1/locationreports/{accountName}/report/{txid}',
    get input() {
      return L().ReportRefRequest;
    },
    get output() {
      return L().CancelReportResponse;
    },
    mutating: true,
    retrySafe: true,
    removes: { notFound: /not found/i, answer: (i) => ({ txid: i.txid }) },
    errorShape: 'errorCode',
  },
} as const satisfies Record<string, Operation>;
