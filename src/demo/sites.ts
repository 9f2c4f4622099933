/**
 * The demo farm registry: 24 wind and solar farms at real wind and solar
 * resource areas of northern and western China, so that generated weather
 * (latitude, altitude, continental climate) looks right for where each farm is.
 */
import { numberText } from '../domain/numberText.js';

// The run schedule travels with the registry: together they say what the demo store holds.
export { demoIssues, RUN_INTERVAL_MS } from './issues.js';

export interface DemoSite {
  farmId: string;
  lat: number;
  lon: number;
  name: string;
  kind: 'wind' | 'solar';
  province: string;
  elevationM: number;
  capacityMw: number;
}

const site = (
  farmId: string,
  name: string,
  kind: 'wind' | 'solar',
  province: string,
  lat: number,
  lon: number,
  elevationM: number,
  capacityMw: number,
): DemoSite => Object.freeze({ farmId, lat, lon, name, kind, province, elevationM, capacityMw });

export const DEMO_SITES: readonly DemoSite[] = Object.freeze([
  // Wind: the Hexi corridor, the Inner Mongolian plateau, the Dabancheng and
  // Hami gaps, the Bashang grassland and the Songnen plain.
  site('WF_GS01', 'Jiuquan Wind Farm 1', 'wind', 'Gansu', 40.52, 95.78, 1170, 200),
  site('WF_GS02', 'Jiuquan Wind Farm 2', 'wind', 'Gansu', 40.29, 97.21, 1480, 150),
  site('WF_NM01', 'Huitengxile Wind Farm 1', 'wind', 'Inner Mongolia', 41.28, 112.63, 1750, 100),
  site('WF_NM02', 'Bayannur Wind Farm 1', 'wind', 'Inner Mongolia', 41.57, 108.52, 1290, 200),
  site('WF_NM03', 'Xilinhot Wind Farm 1', 'wind', 'Inner Mongolia', 43.93, 116.08, 990, 150),
  site('WF_XJ01', 'Dabancheng Wind Farm 1', 'wind', 'Xinjiang', 43.36, 88.31, 1100, 200),
  site('WF_XJ02', 'Hami Wind Farm 1', 'wind', 'Xinjiang', 42.55, 94.1, 950, 200),
  site('WF_HE01', 'Zhangbei Wind Farm 1', 'wind', 'Hebei', 41.16, 114.72, 1420, 150),
  site('WF_SX01', 'Youyu Wind Farm 1', 'wind', 'Shanxi', 40.0, 112.45, 1400, 100),
  site('WF_NX01', 'Helanshan Wind Farm 1', 'wind', 'Ningxia', 38.95, 106.2, 1300, 100),
  site('WF_JL01', 'Baicheng Wind Farm 1', 'wind', 'Jilin', 45.62, 122.84, 155, 200),
  site('WF_HL01', 'Qiqihar Wind Farm 1', 'wind', 'Heilongjiang', 47.35, 123.92, 150, 100),
  // Solar: the Qaidam basin and Talatan on the Qinghai plateau, the Gansu and
  // Xinjiang deserts, the Tengger and Kubuqi deserts, the Loess plateau, Lhasa.
  site('PV_QH01', 'Golmud Solar Farm 1', 'solar', 'Qinghai', 36.42, 94.9, 2800, 200),
  site('PV_QH02', 'Gonghe Solar Farm 1', 'solar', 'Qinghai', 36.12, 100.35, 2900, 300),
  site('PV_QH03', 'Delingha Solar Farm 1', 'solar', 'Qinghai', 37.37, 97.37, 2980, 100),
  site('PV_GS01', 'Dunhuang Solar Farm 1', 'solar', 'Gansu', 40.06, 94.43, 1200, 100),
  site('PV_GS02', 'Jinchang Solar Farm 1', 'solar', 'Gansu', 38.5, 102.19, 1500, 100),
  site('PV_NX01', 'Zhongwei Solar Farm 1', 'solar', 'Ningxia', 37.55, 105.05, 1250, 100),
  site('PV_NM01', 'Ordos Solar Farm 1', 'solar', 'Inner Mongolia', 40.25, 109.9, 1080, 200),
  site('PV_XJ01', 'Turpan Solar Farm 1', 'solar', 'Xinjiang', 42.93, 89.18, 35, 50),
  site('PV_XJ02', 'Kashgar Solar Farm 1', 'solar', 'Xinjiang', 39.47, 75.99, 1290, 50),
  site('PV_XZ01', 'Lhasa Solar Farm 1', 'solar', 'Tibet', 29.63, 91.05, 3660, 30),
  site('PV_SN01', 'Yulin Solar Farm 1', 'solar', 'Shaanxi', 38.3, 109.75, 1150, 100),
  site('PV_SX01', 'Datong Solar Farm 1', 'solar', 'Shanxi', 40.08, 113.3, 1050, 100),
]);

export const FARMS_CSV_HEADER = 'farm_id,lat,lon,name,kind,province,elevation_m,capacity_mw';

// The registry CSV is written without quoting, so a text cell must not be able
// to break the row apart.
const UNSAFE_TEXT = /[,"\r\n]/;

/** The farm registry as CSV text, LF line ends, one row per site in the given order. */
export function demoFarmsCsv(sites: readonly DemoSite[] = DEMO_SITES): string {
  const lines = [FARMS_CSV_HEADER];
  for (const s of sites) {
    for (const text of [s.farmId, s.name, s.kind, s.province]) {
      if (UNSAFE_TEXT.test(text)) throw new Error(`demo site ${s.farmId}: "${text}" contains a comma, quote or line break`);
    }
    lines.push(
      [
        s.farmId,
        numberText(s.lat),
        numberText(s.lon),
        s.name,
        s.kind,
        s.province,
        numberText(s.elevationM),
        numberText(s.capacityMw),
      ].join(','),
    );
  }
  return lines.join('\n') + '\n';
}
