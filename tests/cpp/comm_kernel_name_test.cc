#include "rankscope/analysis/comm_kernel_name.h"

#include <gtest/gtest.h>

namespace rankscope {
namespace {

TEST(CommKernelNameTest, NewStyle) {
  CommKernelName k;
  ASSERT_TRUE(DecodeCommKernelName("ncclDevKernel_AllReduce_Sum_f16_RING_LL", &k));
  EXPECT_EQ(k.op, "AllReduce");
  EXPECT_EQ(k.reduction, "Sum");
  EXPECT_EQ(k.dtype, "f16");
  EXPECT_EQ(k.algorithm, "RING");
  EXPECT_EQ(k.protocol, "LL");
  ASSERT_TRUE(DecodeCommKernelName("ncclDevKernel_ReduceScatter_SumPostDiv_bf16_COLLNET_DIRECT_LL128", &k));
  EXPECT_EQ(k.op, "ReduceScatter");
  EXPECT_EQ(k.reduction, "SumPostDiv");
  EXPECT_EQ(k.dtype, "bf16");
  EXPECT_EQ(k.algorithm, "COLLNET_DIRECT");
  EXPECT_EQ(k.protocol, "LL128");
  ASSERT_TRUE(DecodeCommKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", &k));
  EXPECT_EQ(k.op, "SendRecv");
  EXPECT_EQ(k.algorithm, "");
}

TEST(CommKernelNameTest, OldStyleFromRealTraces) {
  CommKernelName k;
  ASSERT_TRUE(DecodeCommKernelName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", &k));
  EXPECT_EQ(k.op, "AllReduce");
  EXPECT_EQ(k.algorithm, "RING");
  EXPECT_EQ(k.protocol, "LL");
  EXPECT_EQ(k.reduction, "Sum");
  EXPECT_EQ(k.dtype, "float");
  ASSERT_TRUE(DecodeCommKernelName(
      "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", &k));
  EXPECT_EQ(k.op, "SendRecv");
  EXPECT_EQ(k.protocol, "SIMPLE");
  EXPECT_EQ(k.dtype, "int8_t");
}

TEST(CommKernelNameTest, NotComm) {
  CommKernelName k;
  EXPECT_FALSE(DecodeCommKernelName("void at::native::reduce_kernel<512>(...)", &k));
  EXPECT_FALSE(IsBuiltinCommKernelName("sgemm_128x64"));
  EXPECT_TRUE(IsBuiltinCommKernelName("ncclDevKernel_AllGather_RING_LL"));
}

TEST(CommKernelNameTest, CanonicalNames) {
  EXPECT_EQ(CanonicalCollectiveName("AllReduce"), "all_reduce");
  EXPECT_EQ(CanonicalCollectiveName("allreduce"), "all_reduce");
  EXPECT_EQ(CanonicalCollectiveName("all_reduce"), "all_reduce");
  EXPECT_EQ(CanonicalCollectiveName("_allgather_base"), "all_gather");
  EXPECT_EQ(CanonicalCollectiveName("_reduce_scatter_base"), "reduce_scatter");
  EXPECT_EQ(CanonicalCollectiveName("SendRecv"), "send_recv");
  EXPECT_EQ(CanonicalCollectiveName("wait"), "wait");
}

}  // namespace
}  // namespace rankscope
