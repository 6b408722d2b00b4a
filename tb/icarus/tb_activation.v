// Icarus Verilog cross-check of capsgen_activation.
// Replays the per-cycle inputs recorded by the Verilator activation testbench
// (tb_blocks activation --mode icarus --vectors DIR) and compares every output, every cycle, against
// the values that run produced (which were checked against capsgen::fx there): identical results in
// both simulators, including out_valid_o/out_last_o timing, busy_o and err_o. Parameters come from
// DIR/params.txt (-P flags); run with
//   iverilog -g2012 $(cat DIR/params.txt) -Ptb_activation.VectorDir=\"DIR\" -o tb.vvp tb_activation.v <rtl files>
// Prints "PASS tb_activation ..." or "FAIL ..." lines; stops with $fatal(1) on mismatches.
`timescale 1ns / 1ps
module tb_activation;
  parameter integer PsumWidth = 20;
  parameter integer LenWidth = 6;
  parameter integer ShiftWidth = 5;
  parameter integer NormShiftWidth = 5;
  parameter integer OutWidth = 8;
  parameter integer NumCycles = 1;
  parameter VectorDir = ".";

  // Field offsets, as packed by tb/activation_tb.cpp (UnitBench::record).
  localparam integer OffData = 1;
  localparam integer OffFunc = OffData + PsumWidth;
  localparam integer OffLen = OffFunc + 3;
  localparam integer OffShift = OffLen + LenWidth;
  localparam integer OffNormShift = OffShift + ShiftWidth;
  localparam integer InWidth = OffNormShift + NormShiftWidth;
  localparam integer OffOutData = 2;
  localparam integer OffBusy = OffOutData + OutWidth;
  localparam integer OffErr = OffBusy + 1;
  localparam integer ExpWidth = OffErr + 1;

  reg clk = 1'b0;
  reg rst_n = 1'b0;
  reg [InWidth-1:0] vin [0:NumCycles-1];
  reg [ExpWidth-1:0] vexp [0:NumCycles-1];
  reg [InWidth-1:0] cur;
  reg [ExpWidth-1:0] want;

  wire out_valid;
  wire out_last;
  wire [OutWidth-1:0] out_data;
  wire busy;
  wire err;

  capsgen_activation u_dut (
    .clk_i(clk),
    .rst_ni(rst_n),
    .in_valid_i(cur[0]),
    .in_data_i(cur[OffData +: PsumWidth]),
    .func_i(cur[OffFunc +: 3]),
    .len_i(cur[OffLen +: LenWidth]),
    .shift_i(cur[OffShift +: ShiftWidth]),
    .norm_shift_i(cur[OffNormShift +: NormShiftWidth]),
    .out_valid_o(out_valid),
    .out_last_o(out_last),
    .out_data_o(out_data),
    .busy_o(busy),
    .err_o(err)
  );

  always #5 clk = ~clk;

  integer t;
  integer errors;
  integer outputs;
  initial begin
    $readmemh({VectorDir, "/inputs.hex"}, vin);
    $readmemh({VectorDir, "/expected.hex"}, vexp);
    errors = 0;
    outputs = 0;
    cur = {InWidth{1'b0}};
    // Reset for 3 cycles, like tb::Sim::reset().
    repeat (3) @(posedge clk);
    #1 rst_n = 1'b1;
    for (t = 0; t < NumCycles; t = t + 1) begin
      // Inputs of cycle t (applied between edges), then the outputs of cycle t before the edge.
      cur = vin[t];
      want = vexp[t];
      #3;
      if (out_valid !== want[0] || busy !== want[OffBusy] || err !== want[OffErr]) begin
        errors = errors + 1;
        if (errors <= 10)
          $display("MISMATCH block=activation out_valid/busy/err expected=%b%b%b actual=%b%b%b cycle=%0d", want[0],
                   want[OffBusy], want[OffErr], out_valid, busy, err, t);
      end else if (want[0]) begin
        outputs = outputs + 1;
        if (out_data !== want[OffOutData +: OutWidth] || out_last !== want[1]) begin
          errors = errors + 1;
          if (errors <= 10)
            $display("MISMATCH block=activation out_data_o/out_last_o expected=%h/%b actual=%h/%b cycle=%0d",
                     want[OffOutData +: OutWidth], want[1], out_data, out_last, t);
        end
      end
      @(posedge clk);
      #1;
    end
    if (errors == 0) begin
      $display("PASS tb_activation (icarus): %0d cycles, %0d outputs, %0d errors", NumCycles, outputs, errors);
      $finish;
    end else begin
      $display("FAIL tb_activation (icarus): %0d cycles, %0d errors", NumCycles, errors);
      $fatal(1, "mismatches");
    end
  end
endmodule
