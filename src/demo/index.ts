/** The demo data generator: farm registry, run schedule and forecast series. */
export { DEMO_SITES, FARMS_CSV_HEADER, demoFarmsCsv, type DemoSite } from './sites.js';
export { demoIssues } from './issues.js';
export { demoSeries } from './weather.js';
export { cosZenith, solarElevationDeg, localSolarHour } from './solar.js';
