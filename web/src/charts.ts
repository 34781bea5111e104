// Apache ECharts, only the parts the views use (tree-shaken into the page).
import { BarChart, BoxplotChart, LineChart, ScatterChart } from 'echarts/charts';
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  BarChart, BoxplotChart, LineChart, ScatterChart, DataZoomComponent, GridComponent, LegendComponent,
  MarkAreaComponent, MarkLineComponent, TitleComponent, TooltipComponent, CanvasRenderer,
]);

export type Chart = echarts.ECharts;
export type ChartOption = echarts.EChartsCoreOption;

// A chart in `el`, resized with the window; call dispose() when the view goes.
export function makeChart(el: HTMLElement, option: ChartOption): Chart {
  const chart = echarts.init(el, undefined, { renderer: 'canvas' });
  chart.setOption({ animation: false, ...option });
  const onResize = () => chart.resize();
  window.addEventListener('resize', onResize);
  const dispose = chart.dispose.bind(chart);
  chart.dispose = () => {
    window.removeEventListener('resize', onResize);
    dispose();
  };
  return chart;
}

export class Charts {
  private list: Chart[] = [];
  add(el: HTMLElement, option: ChartOption): Chart {
    const c = makeChart(el, option);
    this.list.push(c);
    return c;
  }
  disposeAll(): void {
    for (const c of this.list) if (!c.isDisposed()) c.dispose();
    this.list = [];
  }
}
