// Icarus Verilog cross-check of capsgen_systolic_array + capsgen_accumulator_bank.
// Replays the per-cycle inputs recorded by the Verilator array testbench
// (tb_blocks array --mode icarus --vectors DIR) and compares every output against the values that
// run produced (which were checked against the golden GEMM there): identical results in both
// simulators. Parameters come from DIR/params.txt (-P flags); run with
//   iverilog -g2012 $(cat DIR/params.txt) -Ptb_array.VectorDir=\"DIR\" -o tb.vvp tb_array.v <rtl files>
// Prints "PASS tb_array ..." or "FAIL ..." lines; stops with $fatal(1) on mismatches.
`timescale 1ns / 1ps
module tb_array;
  parameter integer Rows = 2;
  parameter integer Cols = 2;
  parameter integer DataWidth = 8;
  parameter integer WeightWidth = 8;
  parameter integer PsumWidth = 20;
  parameter integer AddrWidth = 6;
  parameter integer NumCycles = 1;
  parameter VectorDir = ".";

  localparam integer InWidth = Rows * DataWidth + 2 + Cols * WeightWidth + 1 + 3 + AddrWidth + Cols * PsumWidth;
  localparam integer ExpWidth = 1 + Cols * PsumWidth + 1 + AddrWidth + Cols * PsumWidth;
  // Field offsets, as packed by tb/array_tb.cpp.
  localparam integer OffValid = Rows * DataWidth;
  localparam integer OffSwap = OffValid + 1;
  localparam integer OffWeight = OffSwap + 1;
  localparam integer OffLoad = OffWeight + Cols * WeightWidth;
  localparam integer OffAccValid = OffLoad + 1;
  localparam integer OffAccMode = OffAccValid + 1;
  localparam integer OffAccLast = OffAccMode + 1;
  localparam integer OffAddr = OffAccLast + 1;
  localparam integer OffBias = OffAddr + AddrWidth;
  localparam integer OffOutValid = 1 + Cols * PsumWidth;

  reg clk = 1'b0;
  reg rst_n = 1'b0;
  reg [InWidth-1:0] vin [0:NumCycles-1];
  reg [ExpWidth-1:0] vexp [0:NumCycles-1];
  reg [InWidth-1:0] cur;
  reg [ExpWidth-1:0] want;

  wire [Cols*PsumWidth-1:0] result;
  wire result_valid;
  wire out_valid;
  wire [AddrWidth-1:0] out_addr;
  wire [Cols*PsumWidth-1:0] out_data;
  wire rd_valid;
  wire [Cols*PsumWidth-1:0] rd_data;

  capsgen_systolic_array #(
    .DataWidth(DataWidth),
    .WeightWidth(WeightWidth),
    .PsumWidth(PsumWidth)
  ) u_array (
    .clk_i(clk),
    .rst_ni(rst_n),
    .data_i(cur[0 +: Rows*DataWidth]),
    .data_valid_i(cur[OffValid]),
    .weight_swap_i(cur[OffSwap]),
    .weight_i(cur[OffWeight +: Cols*WeightWidth]),
    .weight_load_i(cur[OffLoad]),
    .result_o(result),
    .result_valid_o(result_valid)
  );

  capsgen_accumulator_bank #(
    .PsumWidth(PsumWidth),
    .AddrWidth(AddrWidth)
  ) u_bank (
    .clk_i(clk),
    .rst_ni(rst_n),
    .in_valid_i(cur[OffAccValid]),
    .in_accumulate_i(cur[OffAccMode]),
    .in_last_i(cur[OffAccLast]),
    .in_addr_i(cur[OffAddr +: AddrWidth]),
    .in_psum_i(result),
    .in_bias_i(cur[OffBias +: Cols*PsumWidth]),
    .out_valid_o(out_valid),
    .out_addr_o(out_addr),
    .out_data_o(out_data),
    .rd_en_i(1'b0),
    .rd_addr_i({AddrWidth{1'b0}}),
    .rd_valid_o(rd_valid),
    .rd_data_o(rd_data)
  );

  always #5 clk = ~clk;

  integer t;
  integer errors;
  integer checks;
  initial begin
    $readmemh({VectorDir, "/inputs.hex"}, vin);
    $readmemh({VectorDir, "/expected.hex"}, vexp);
    errors = 0;
    checks = 0;
    cur = {InWidth{1'b0}};
    // Reset for 3 cycles, like tb::Sim::reset().
    repeat (3) @(posedge clk);
    #1 rst_n = 1'b1;
    for (t = 0; t < NumCycles; t = t + 1) begin
      // Inputs of cycle t (applied between edges), then the outputs of cycle t before the edge.
      cur = vin[t];
      want = vexp[t];
      #3;
      checks = checks + 1;
      if (result_valid !== want[0]) begin
        errors = errors + 1;
        if (errors <= 10) $display("MISMATCH block=array result_valid_o expected=%0d actual=%b cycle=%0d", want[0], result_valid, t);
      end else if (want[0] && result !== want[1 +: Cols*PsumWidth]) begin
        errors = errors + 1;
        if (errors <= 10) $display("MISMATCH block=array result_o expected=%h actual=%h cycle=%0d", want[1 +: Cols*PsumWidth], result, t);
      end
      if (out_valid !== want[OffOutValid]) begin
        errors = errors + 1;
        if (errors <= 10) $display("MISMATCH block=accumulator_bank out_valid_o expected=%0d actual=%b cycle=%0d", want[OffOutValid], out_valid, t);
      end else if (want[OffOutValid] && (out_data !== want[OffOutValid+1+AddrWidth +: Cols*PsumWidth] ||
                                         out_addr !== want[OffOutValid+1 +: AddrWidth])) begin
        errors = errors + 1;
        if (errors <= 10) $display("MISMATCH block=accumulator_bank out_data_o expected=%h actual=%h cycle=%0d", want[OffOutValid+1+AddrWidth +: Cols*PsumWidth], out_data, t);
      end
      @(posedge clk);
      #1;
    end
    if (errors == 0) begin
      $display("PASS tb_array (icarus): %0d cycles, %0d errors", NumCycles, errors);
      $finish;
    end else begin
      $display("FAIL tb_array (icarus): %0d cycles, %0d errors", NumCycles, errors);
      $fatal(1, "mismatches");
    end
  end
endmodule
